import { describe, expect, it } from "vitest";
import type { PolicyResult, ScenarioResult } from "../../src/sim/benchmark";
import { markdownReport, ratios } from "../../scripts/lib/bench-report";
import { attainmentChartSvg } from "../../scripts/lib/charts";

const policy = (p95: number, capacity: number, curve: number[]): PolicyResult => ({
  alpha: null,
  latency: { mean: p95 / 2, p50: p95 / 2, p95, p99: p95 * 1.1 },
  attainment: { "3": 0.5, "5": 0.9, "8": 1 },
  curve,
  throughput: 0.3,
  capacity,
});
const row: ScenarioResult = {
  engine: "vllm",
  trace: "synthetic",
  rate: 0.5,
  baseSloS: 70,
  policies: { "rr-fcfs": policy(300, 0.2, [0, 0.5, 1]), hexgen: { ...policy(200, 0.3, [0.2, 0.9, 1]), alpha: 0.7 } },
};

describe("benchmark report", () => {
  it("reports P95 as baseline / policy and capacity as policy / baseline", () => {
    const r = ratios(row, "hexgen", "rr-fcfs");
    expect(r.p95).toBeCloseTo(1.5, 12);
    expect(r.capacity).toBeCloseTo(1.5, 12);
    expect(Number.isNaN(ratios(row, "edf", "rr-fcfs").p95)).toBe(true);
  });

  it("renders the tables with ratios and missing comparisons marked", () => {
    const md = markdownReport([row], { tableScales: [3, 5, 8] }, "meta");
    expect(md).toContain("| hexgen | 0.70 | 100.0 | 200.0 | 220.0 | 50% | 90% | 100% | 0.300 | 0.300 | 1.50x | 1.50x |");
    expect(md).toContain("| vllm | synthetic | 0.5 | 1.50x / 1.50x | – / – |");
  });

  it("draws the attainment chart as SVG with one line per policy", async () => {
    const svg = await attainmentChartSvg([row], [1, 2, 3], "test chart");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("hexgen");
    expect(svg).toContain("rr-fcfs");
    expect(svg).toContain("test chart");
  });
});
