import { describe, expect, it } from "vitest";
import { MAX_CALL_ATTEMPTS } from "../../src/core/call-retry";
import { chaosFigures, chaosVerdict, retryBound, type CallLine, type PlannedWorkflow } from "../../scripts/lib/chaos-check";
import type { WorkflowView } from "../../scripts/lib/chaos-client";
import { chaosSchedule } from "../../scripts/lib/chaos-schedule";

const view = (id: string, status: string, extra: Partial<WorkflowView> = {}): PlannedWorkflow["final"] => ({
  kind: "view",
  view: { id, status, latencyMs: status === "succeeded" ? 10_000 : null, sloMs: 20_000, sloMet: status === "succeeded" ? true : null, stages: [{ calls: [{ id: `${id}:0:0`, instance: "a", finishedMs: status === "running" ? null : 5 }] }], ...extra },
});
const line = (callId: string | null, atMs = 0, port = 1): CallLine => ({ callId, atMs, port });

describe("chaos harness: the schedule", () => {
  it("is seeded, kills and restarts one server per cycle, and restarts the Worker once around the middle", () => {
    const o = { seed: 3, durationS: 600, instances: ["a", "b", "c", "d"] };
    const s = chaosSchedule(o);
    expect(chaosSchedule(o)).toEqual(s);
    expect(s.events.filter((e) => e.action.kind === "kill")).toHaveLength(4);
    expect(s.events.filter((e) => e.action.kind === "restart")).toHaveLength(4);
    const dead = s.deadSpans.reduce((k, [a, b]) => k + b - a, 0) / o.durationS;
    expect(dead).toBeGreaterThan(0.4);
    expect(dead).toBeLessThan(0.6);
    const worker = s.events.filter((e) => e.action.kind === "restart-worker");
    expect(worker).toHaveLength(1);
    expect(worker[0]?.atS).toBeGreaterThan(250);
    expect(worker[0]?.atS).toBeLessThan(350);
    // Bursts never hit the dead server.
    expect(s.events.some((e) => e.action.kind === "burst" && e.action.instance === s.victim)).toBe(false);
    expect(s.events.every((e, i, xs) => i === 0 || (xs[i - 1]?.atS ?? 0) <= e.atS)).toBe(true);
  });
});

describe("chaos harness: the accounting", () => {
  it("passes when every accepted workflow ended with a reason and no call ran beyond the bound", () => {
    const planned: PlannedWorkflow[] = [
      { index: 0, key: "k0", arrivalS: 0, submit: { ids: ["wf_a"], replayed: 0, attempts: 1, retriedFor: [] }, recheck: { id: "wf_a", replayed: true }, final: view("wf_a", "succeeded") },
      { index: 1, key: "k1", arrivalS: 1, submit: { ids: ["wf_b"], replayed: 1, attempts: 2, retriedFor: ["no answer network_error"] }, final: view("wf_b", "failed", { error: { code: "no_instance", message: "m" } }) },
      { index: 2, key: "k2", arrivalS: 2, submit: { ids: [], replayed: 0, attempts: 1, retriedFor: [], refusal: { status: 429, code: "rate_limited", message: "m" } } },
    ];
    const f = chaosFigures(planned, { workflows: [{ workflow_id: "wf_a", status: "succeeded", error_code: null }, { workflow_id: "wf_b", status: "failed", error_code: "no_instance" }], truncated: false }, { lines: [line("wf_a:0:0"), line("wf_b:0:0"), line("wf_b:0:0", 5, 2)], torn: 0 });
    expect(f).toMatchObject({ submitted: 3, accepted: 2, refused: 1, succeeded: 1, failed: 1, lost: 0, duplicated: 0, resubmitted: 1, resubmittedFor: { "no answer network_error": 1 }, replayed: 1, failedByCode: { "failed: no_instance": 1 }, refusedByCode: { "429 rate_limited": 1 } });
    expect(f.recheck).toEqual({ checked: 1, sameId: 1, replayedHeader: 1, otherId: 0, noId: {} });
    expect(f.retry).toMatchObject({ calls: 2, executions: 3, reexecuted: 1, maxExecutions: 2, violations: [] });
    expect(f.retry.reexecutedSample).toEqual([{ callId: "wf_b:0:0", runs: [{ port: 1, afterMs: 0 }, { port: 2, afterMs: 5 }] }]);
    expect(chaosVerdict(f)).toEqual({ ok: true, problems: [] });
  });

  it("finds the lost, the duplicated, calls beyond the bound and failures without a reason", () => {
    const planned: PlannedWorkflow[] = [
      { index: 0, key: "k0", arrivalS: 0, submit: { ids: ["wf_a"], replayed: 0, attempts: 1, retriedFor: [] }, final: { kind: "not-found" } },
      { index: 1, key: "k1", arrivalS: 1, submit: { ids: ["wf_b", "wf_c"], replayed: 0, attempts: 2, retriedFor: ["502 http_502"] }, final: view("wf_b", "running") },
      { index: 2, key: "k2", arrivalS: 2, submit: { ids: ["wf_d"], replayed: 0, attempts: 1, retriedFor: [] }, recheck: { id: "wf_e", replayed: false }, final: view("wf_d", "failed") },
    ];
    const calls = [...Array.from({ length: MAX_CALL_ATTEMPTS + 1 }, () => line("wf_d:0:0")), line("wf_b:0:0"), line("wf_x:0:0")];
    const f = chaosFigures(planned, { workflows: [{ workflow_id: "wf_y", status: "succeeded", error_code: null }], truncated: false }, { lines: calls, torn: 1 });
    expect(f.lost).toBe(2);
    expect(f.lostDetail.map((l) => l.id)).toEqual(["wf_a", "wf_b"]);
    expect(f.duplicateDetail.map((d) => d.id).sort()).toEqual(["wf_c", "wf_e", "wf_x", "wf_y"]);
    expect(f.retry.violations).toEqual([{ workflowId: "wf_d", callId: "wf_d:0:0", executions: MAX_CALL_ATTEMPTS + 1 }]);
    expect(f.unexplained).toBe(1);
    expect(chaosVerdict(f).problems).toEqual(["2 lost", "4 duplicated", `1 calls executed more than ${MAX_CALL_ATTEMPTS} times`, "1 failed without a reason"]);
  });

  it("counts executions per call id from the logs", () => {
    expect(retryBound([line("x:0:0"), line(null), line("x:0:0")], 0)).toMatchObject({ executions: 3, unnamed: 1, calls: 1, maxExecutions: 2 });
  });
});
