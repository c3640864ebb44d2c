/**
 * Capacity with workflow admission on (issue 11: shedding must not buy the figure). Refused workflows count as
 * misses by default; "excluded" reads the accepted only, over the same steady window.
 */
import { describe, expect, it } from "vitest";
import { getPolicy } from "../../src/core/policies";
import { measureCapacity, steadyAttainment } from "../../src/sim/capacity";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { steadyState } from "../../src/sim/metrics";
import { runScenario, type Scenario } from "../../src/sim/scenario";

const hexgen = getPolicy("hexgen");
if (hexgen === undefined) throw new Error("hexgen missing");
const base: Scenario = { instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: 150, rate: 0.5, sloScale: 2, admission: { config: {}, bestEffort: false } };

describe("capacity with admission", () => {
  it("counts a refused workflow as a miss, or leaves it out when reading the accepted only", () => {
    // At 0.5 wf/s (about 4x this pool's capacity at a 2x SLO) admission refuses part of the work.
    const run = runScenario(base, hexgen, 0.8, 1);
    const refused = run.output.rejected ?? [];
    expect(refused.length).toBeGreaterThan(0);
    // The same reading by hand: refused ids start with "r", met workflows have latency 0.
    const rows = [
      ...run.output.workflows.map((w, i) => ({ id: `a${i}`, arrivalS: w.arrivalS, finishS: 0, latencyS: w.latencyS <= run.sloS + 1e-9 ? 0 : 1, calls: 0 })),
      ...refused.map((r, i) => ({ id: `r${i}`, arrivalS: r.arrivalS, finishS: 0, latencyS: 1, calls: 0 })),
    ];
    const steady = steadyState(rows);
    const met = steady.filter((r) => r.latencyS === 0).length;
    const steadyRefused = steady.filter((r) => r.id.startsWith("r")).length;
    expect(steadyRefused).toBeGreaterThan(0);
    expect(steadyAttainment(base, hexgen, 0.8, [1], "miss")).toBeCloseTo(met / steady.length, 12);
    expect(steadyAttainment(base, hexgen, 0.8, [1], "excluded")).toBeCloseTo(met / (steady.length - steadyRefused), 12);
  });

  it("so the accepted-only capacity is never below the one that counts the refused", () => {
    const opts = { seeds: [1], alpha: 0.8, tolerance: 0.05, horizonSlos: 4 };
    const misses = measureCapacity(base, hexgen, opts);
    const accepted = measureCapacity(base, hexgen, { ...opts, rejected: "excluded" });
    for (const p of misses.probes) {
      const same = accepted.probes.find((q) => q.rate === p.rate);
      if (same !== undefined) expect(same.attainment).toBeGreaterThanOrEqual(p.attainment);
    }
    expect(accepted.capacity).toBeGreaterThanOrEqual(misses.capacity);
  }, 120_000);
});
