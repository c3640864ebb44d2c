import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultCost, estimateSeconds } from "../../src/core/cost-model";
import { sortedPercentile } from "../../src/core/stats";
import { NEEDS_SHARED, SHARED_DATA } from "./shared-data";

describe("cost model", () => {
  it("prices a call as overhead + prefill x input + decode x output", () => {
    expect(estimateSeconds({ overheadS: 0.5, prefillS: 0.001, decodeS: 0.05 }, 1000, 20)).toBeCloseTo(2.5, 12);
  });

  it("orders the GPUs as the profile does: A100 fastest, A6000 slowest on decode", () => {
    const t = (g: "A100" | "A6000" | "L40S" | "H100") => estimateSeconds(defaultCost(g), 10_000, 700);
    expect(t("H100")).toBeLessThan(t("A100"));
    expect(t("A100")).toBeLessThan(t("L40S"));
    expect(t("L40S")).toBeLessThan(t("A6000"));
  });

  it.skipIf(SHARED_DATA === undefined)(`fits the measured latency profile (${NEEDS_SHARED})`, () => {
    const csv = readFileSync(join(SHARED_DATA ?? "", "profiles/llama31-70b-chess/latency-by-pair.csv"), "utf8");
    const rows = csv.trim().split("\n").slice(1).map((l) => l.split(",").map(Number));
    expect(rows.length).toBe(484);
    (["A100", "A6000", "L40S"] as const).forEach((gpu, g) => {
      const rel = rows
        .map((r) => {
          const measured = r[2 + g] ?? Number.NaN;
          return Math.abs(estimateSeconds(defaultCost(gpu), r[0] ?? 0, r[1] ?? 0) - measured) / measured;
        })
        .sort((a, b) => a - b);
      expect(sortedPercentile(rel, 0.5)).toBeLessThan(0.03);
      expect(sortedPercentile(rel, 0.9)).toBeLessThan(0.07);
    });
  });
});
