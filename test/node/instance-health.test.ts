import { describe, expect, it } from "vitest";
import { classifyFailure, MAX_CALL_ATTEMPTS } from "../../src/core/call-retry";
import { getPolicy } from "../../src/core/policies";
import { InstanceRegistrationSchema, toRecord } from "../../src/core/pool";
import { PoolScheduler } from "../../src/core/pool-scheduler";
import type { WorkflowSpec } from "../../src/core/workflow";
import { startWorkflow } from "../../src/core/workflow-run";
import { dispatchRule, HEALTH_DEFAULTS, newHealth, observeHealth, type HealthEvidence, type InstanceHealth } from "../../src/core/instance-health";

const ok = (source: "probe" | "call"): HealthEvidence => ({ source, ok: true });
const fail = (source: "probe" | "call"): HealthEvidence => ({ source, ok: false, error: "refused" });

function run(events: HealthEvidence[], from: InstanceHealth = newHealth(0)): InstanceHealth[] {
  const out: InstanceHealth[] = [];
  let h = from;
  events.forEach((e, i) => {
    h = observeHealth(h, e, i + 1).health;
    out.push(h);
  });
  return out;
}

describe("instance health", () => {
  it("turns unhealthy after `unhealthyAfter` consecutive failures of one kind, not before", () => {
    const states = run([fail("probe"), fail("probe"), fail("probe")]).map((h) => h.status);
    expect(HEALTH_DEFAULTS.unhealthyAfter).toBe(3);
    expect(states).toEqual(["healthy", "healthy", "unhealthy"]);
    // A success in between resets its own counter.
    expect(run([fail("call"), fail("call"), ok("call"), fail("call"), fail("call")]).map((h) => h.status).at(-1)).toBe("healthy");
  });

  it("keeps probe and call failures apart: probes that pass do not excuse calls that keep failing", () => {
    const states = run([fail("call"), ok("probe"), fail("call"), ok("probe"), fail("call")]);
    expect(states.at(-1)?.status).toBe("unhealthy");
    expect(states.at(-1)?.lastError).toBe("call: refused");
  });

  it("recovers through probation: the first success, then `probationSuccesses` in a row; any failure sends it back", () => {
    const down = run([fail("probe"), fail("probe"), fail("probe")]).at(-1) ?? newHealth(0);
    const up = run(Array.from({ length: HEALTH_DEFAULTS.probationSuccesses }, () => ok("probe")), down).map((h) => h.status);
    expect(up).toEqual(["probation", "probation", "probation", "probation", "healthy"]);
    const relapse = run([ok("probe"), ok("call"), fail("call")], down).map((h) => h.status);
    expect(relapse).toEqual(["probation", "probation", "unhealthy"]);
  });

  it("records when the status changed, and only then", () => {
    const states = run([fail("probe"), fail("probe"), fail("probe"), fail("probe"), ok("probe")]);
    expect(states.map((h) => h.sinceMs)).toEqual([0, 0, 3, 3, 5]);
  });

  it("dispatch skips an unhealthy instance and caps one in probation", () => {
    const h = newHealth(0);
    expect(dispatchRule(h)).toEqual({ dispatchable: true, cap: undefined });
    expect(dispatchRule({ ...h, status: "unhealthy" }).dispatchable).toBe(false);
    expect(dispatchRule({ ...h, status: "probation" })).toEqual({ dispatchable: true, cap: HEALTH_DEFAULTS.probationMaxOutstanding });
  });
});

describe("call retry classification", () => {
  it("retries what the server or the path caused, never a request the server refused as such", () => {
    expect(MAX_CALL_ATTEMPTS).toBeGreaterThanOrEqual(2);
    for (const code of ["upstream_unreachable", "upstream_timeout", "upstream_bad_response", "instance_restarted"]) expect(classifyFailure({ code, message: "" })).toBe("retry");
    for (const status of [500, 502, 503, 408, 429]) expect(classifyFailure({ code: "upstream_error", status, message: "" })).toBe("retry");
    for (const status of [400, 401, 404, 413, 422]) expect(classifyFailure({ code: "upstream_error", status, message: "" })).toBe("fatal");
    expect(classifyFailure({ code: "evacuated", message: "" })).toBe("evacuated");
    expect(classifyFailure({ code: "cancelled", message: "" })).toBe("fatal");
  });
});

describe("dispatch under health", () => {
  const record = (id: string, gpu: "A100" | "L40S") => toRecord(InstanceRegistrationSchema.parse({ id, url: `http://${id}.test`, gpu }), 0);
  const fanOut: WorkflowSpec = { kind: "test", template: ["b"], stages: [{ step: "b", calls: Array.from({ length: 6 }, () => ({ step: "b", inputTokens: 500, outputTokens: 50 })) }] };
  const policy = getPolicy("hexgen");
  if (policy === undefined) throw new Error("hexgen policy missing");
  const release = (s: PoolScheduler) => {
    const r = s.releaseStage(startWorkflow("w", fanOut, 0, 1000), 0);
    if (!r.ok) throw new Error(r.error.message);
    return r.dispatched.map((d) => d.instanceId);
  };

  it("never sends an excluded instance a call, and caps one in probation while another can take the work", () => {
    const pool = [record("a", "A100"), record("b", "L40S")];
    expect(release(new PoolScheduler(pool, policy, 0.7, 1, { excluded: new Set(["a"]), caps: new Map() }))).toEqual(Array(6).fill("b"));
    const capped = release(new PoolScheduler(pool, policy, 0.7, 1, { excluded: new Set(), caps: new Map([["a", 2]]) }));
    expect(capped.filter((id) => id === "a").length).toBeLessThanOrEqual(2);
    expect(capped).toHaveLength(6);
  });

  it("a cap is a preference: with nothing else, the capped instance takes the whole stage rather than failing it", () => {
    const pool = [record("a", "A100"), record("b", "L40S")];
    expect(release(new PoolScheduler(pool, policy, 0.7, 1, { excluded: new Set(["b"]), caps: new Map([["a", 2]]) }))).toEqual(Array(6).fill("a"));
  });

  it("with every active instance excluded the release waits (no_healthy_instance), unlike an empty pool", () => {
    const s = new PoolScheduler([record("a", "A100")], policy, 0.7, 1, { excluded: new Set(["a"]), caps: new Map() });
    const r = s.releaseStage(startWorkflow("w", fanOut, 0, 1000), 0);
    expect(r.ok ? "ok" : r.error.code).toBe("no_healthy_instance");
  });

  it("a re-sent call avoids the instances it failed on unless none other is left", () => {
    const call = { id: "w:0:0", workflowId: "w", stageIndex: 0, step: "b", inputTokens: 500, outputTokens: 50, expectedOutputTokens: 50, releasedAt: 0, budgetS: 10, deadlineS: 10 };
    for (const failedOn of ["a", "b"]) {
      const r = new PoolScheduler([record("a", "A100"), record("b", "L40S")], policy, 0.7, 1).redispatch(call, 0, [failedOn]);
      expect(r.ok && r.dispatched.instanceId).toBe(failedOn === "a" ? "b" : "a");
    }
    const alone = new PoolScheduler([record("a", "A100")], policy, 0.7, 1).redispatch(call, 0, ["a"]);
    expect(alone.ok && alone.dispatched.instanceId).toBe("a");
    // Every instance it failed on is passed over, not only the last: a third attempt does not go back to the first.
    const three = new PoolScheduler([record("a", "A100"), record("b", "A100"), record("c", "L40S")], policy, 0.7, 1);
    const r = three.redispatch(call, 0, ["a", "b"]);
    expect(r.ok && r.dispatched.instanceId).toBe("c");
  });
});
