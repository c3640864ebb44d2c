import { describe, expect, it } from "vitest";
import { classifyFailure, MAX_CALL_ATTEMPTS } from "../../src/core/call-retry";
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
