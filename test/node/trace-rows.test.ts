import { describe, expect, it } from "vitest";
import { referenceExport, traceRows, type TraceCallInput, type TraceMetaInput } from "../../src/core/trace-rows";
import { parseTrace } from "../../src/sim/trace";

const META: TraceMetaInput = { id: "wf_1", kind: "chess", status: "succeeded", pool: "default", arrivalS: 100, sloS: 30, finishedAt: 120, createdAtMs: 1_700_000_000_000 };
const base = { step: "x", inputTokens: 10, instanceId: "a", budgetS: 5, alphaVersion: 3, releasedAt: 100, enqueuedAt: 100.1, admittedAt: 100.2, completionTokens: 7 };
/** Given out of order, with a place (10) that sorts after 2 only as a number. */
const CALLS: TraceCallInput[] = [
  { ...base, id: "wf_1:1:10", stageIndex: 1, step: "b", instanceId: "b", deadlineS: 110, finishedAt: 111 },
  { ...base, id: "wf_1:0:0", stageIndex: 0, step: "a", deadlineS: 105, finishedAt: 104 },
  { ...base, id: "wf_1:1:2", stageIndex: 1, step: "c", deadlineS: 110, finishedAt: 109, alphaVersion: 4 },
];
const EXTRA = { tenant: "t", policy: "hexgen", gpuOf: (id: string) => (id === "a" ? "A100" : null), nowMs: 1_700_000_100_000 };

describe("traceRows", () => {
  it("builds the workflow row and one call row per call, in call order", () => {
    const { workflow, calls } = traceRows(META, CALLS, EXTRA);
    expect(workflow).toMatchObject({ workflow_id: "wf_1", tenant: "t", kind: "chess", latency_s: 20, slo_met: 1, policy: "hexgen", alpha_version: 3, created_at_ms: 1_700_000_000_000, recorded_at_ms: 1_700_000_100_000 });
    expect(calls.map((c) => c.call_id)).toEqual(["wf_1:0:0", "wf_1:1:2", "wf_1:1:10"]);
    expect(calls.map((c) => [c.gpu, c.met, c.output_tokens])).toEqual([["A100", 1, 7], ["A100", 1, 7], [null, 0, 7]]);
  });

  it("gives a failed workflow no latency and a missed SLO, a cancelled one no verdict", () => {
    const failed = traceRows({ ...META, status: "failed", errorCode: "upstream" }, [{ ...base, id: "wf_1:0:0", stageIndex: 0, deadlineS: 105, finishedAt: undefined, completionTokens: undefined, error: "boom" }], EXTRA);
    expect(failed.workflow).toMatchObject({ latency_s: null, finished_s: null, slo_met: 0, error_code: "upstream" });
    expect(failed.calls[0]).toMatchObject({ met: null, output_tokens: null, finished_s: null, error: "boom" });
    expect(traceRows({ ...META, status: "cancelled" }, [], EXTRA).workflow).toMatchObject({ slo_met: null, alpha_version: null });
  });

  it("misses the SLO when the latency exceeds it", () => {
    expect(traceRows({ ...META, finishedAt: 131 }, CALLS, EXTRA).workflow.slo_met).toBe(0);
  });
});

describe("referenceExport", () => {
  it("rebuilds a trace the simulator loads, with arrivals from the first, skipping what cannot be replayed", () => {
    const one = traceRows(META, CALLS, EXTRA);
    const two = traceRows({ ...META, id: "wf_2", arrivalS: 90 }, CALLS.map((c) => ({ ...c, id: c.id.replace("wf_1", "wf_2") })), EXTRA);
    const failed = traceRows({ ...META, id: "wf_3", status: "failed" }, [], EXTRA);
    const out = referenceExport([one.workflow, two.workflow, failed.workflow], [...one.calls, ...two.calls]);
    expect(out.workflow_ids).toEqual(["wf_2", "wf_1"]);
    expect(out.arrivals_s).toEqual([0, 10]);
    expect(out.skipped).toBe(1);
    expect(out.trace[0]?.Text2SQLRequest.map((c) => c.step)).toEqual(["a", "c", "b"]);
    const parsed = parseTrace(JSON.stringify(out.trace), "export.json");
    expect(parsed.ok).toBe(true);
  });
});
