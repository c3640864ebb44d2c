import { describe, expect, it } from "vitest";
import { latencySeries, SeriesOptionsSchema, timelines } from "../../src/core/dashboard";
import type { CallTraceRow, WorkflowTraceRow } from "../../src/core/trace-rows";

const opts = SeriesOptionsSchema.parse({ windowS: 60, stepS: 10, spanS: 20 });
const NOW = 1_000_000;
const row = (atMs: number, latency: number | null, status: "succeeded" | "failed" | "cancelled" = "succeeded", met: 0 | 1 | null = 1, slo = 10) => ({ status, latency_s: latency, slo_met: met, slo_s: slo, recorded_at_ms: atMs });

describe("latencySeries", () => {
  it("has one point per step, the last at now, each over the trailing span", () => {
    const rows = [row(NOW - 55_000, 9), row(NOW - 15_000, 1, "succeeded", 1, 30), row(NOW - 5_000, 2, "succeeded", 1, 20), row(NOW - 5_000, null, "failed", 0), row(NOW - 1_000, null, "cancelled", null)];
    const pts = latencySeries(rows, NOW, opts);
    expect(pts.map((p) => p.atMs)).toEqual([-60_000, -50_000, -40_000, -30_000, -20_000, -10_000, 0].map((d) => NOW + d));
    // The one at -55 s is in the spans ending at -50 s and -40 s (20 s each), not before or after.
    expect(pts.map((p) => p.ended)).toEqual([0, 1, 1, 0, 0, 1, 3]);
    expect(pts.map((p) => p.p95S)).toEqual([null, 9, 9, null, null, 1, 2]);
    const last = pts.at(-1);
    // A failed workflow misses its SLO; a cancelled one is not counted at all.
    expect(last?.attainment).toBeCloseTo(2 / 3, 12);
    expect(last?.throughputPerS).toBe(2 / 20);
    expect(pts.map((p) => p.sloP50S)).toEqual([null, 10, 10, null, null, 30, 20]);
  });

  it("takes the nearest-rank P95 and does not care about the rows' order", () => {
    const rows = Array.from({ length: 40 }, (_, i) => row(NOW - 1000 - i, 40 - i));
    const [a, b] = [latencySeries(rows, NOW, opts).at(-1), latencySeries([...rows].reverse(), NOW, opts).at(-1)];
    expect(a?.p95S).toBe(38);
    expect(b).toEqual(a);
  });
});

describe("timelines", () => {
  const wf = (id: string, recorded: number): WorkflowTraceRow => ({ workflow_id: id, tenant: "t", pool: "p", kind: "replay", status: "succeeded", arrival_s: 100, finished_s: 130, slo_s: 60, latency_s: 30, slo_met: 1, policy: "hexgen", alpha_version: 1, error_code: null, created_at_ms: 0, recorded_at_ms: recorded });
  const call = (id: string, w: string, released: number, admitted: number | null): CallTraceRow => ({ call_id: id, workflow_id: w, tenant: "t", pool: "p", stage_index: 0, step: "s", input_tokens: 1, output_tokens: 1, instance_id: "i", gpu: "A100", released_s: released, enqueued_s: released, admitted_s: admitted, finished_s: admitted === null ? null : admitted + 5, deadline_s: 200, budget_s: 100, met: 1, alpha_version: 1, error: null, recorded_at_ms: 0 });

  it("puts the newest workflow first and its calls in release order, relative to its arrival", () => {
    const t = timelines([wf("old", 1), wf("new", 2)], [call("b", "new", 120, 121), call("a", "new", 110, null), call("c", "old", 100, 100)]);
    expect(t.map((w) => w.id)).toEqual(["new", "old"]);
    expect(t[0]?.calls.map((c) => [c.id, c.releasedS, c.startedS, c.finishedS])).toEqual([["a", 10, null, null], ["b", 20, 21, 26]]);
    expect(t[1]?.calls).toHaveLength(1);
  });
});
