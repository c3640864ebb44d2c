import { describe, expect, it } from "vitest";
import { buildWorkload, withRateChange } from "../../src/sim/workload";

describe("withRateChange", () => {
  it("shrinks the arrival gaps by the factor from the change on and keeps everything else", () => {
    const base = buildWorkload({ kind: "synthetic" }, 200, 0.25, 3);
    const changed = withRateChange(base, 100, 2);
    expect(changed.map((w) => w.spec)).toEqual(base.map((w) => w.spec));
    expect(changed.slice(0, 100).map((w) => w.arrivalS)).toEqual(base.slice(0, 100).map((w) => w.arrivalS));
    const span = (xs: typeof base) => (xs.at(-1)?.arrivalS ?? 0) - (xs[99]?.arrivalS ?? 0);
    expect(span(changed)).toBeCloseTo(span(base) / 2, 9);
    // Observed rates: about 0.25/s before, 0.5/s after (100 Poisson gaps each).
    expect(99 / (changed[99]?.arrivalS ?? 1)).toBeGreaterThan(0.18);
    expect(99 / (changed[99]?.arrivalS ?? 1)).toBeLessThan(0.33);
    expect(100 / span(changed)).toBeGreaterThan(0.38);
    expect(100 / span(changed)).toBeLessThan(0.65);
  });
});
