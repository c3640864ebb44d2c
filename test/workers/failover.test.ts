/**
 * Issue 8, failover: a call that fails on an instance (refused, 5xx, timeout, a stream cut mid-way) goes
 * back to its workflow and runs elsewhere with its deadline, at most MAX_CALL_ATTEMPTS times; a 4xx is
 * not retried. Faults are injected at the upstream seam (the fetch a GpuInstanceObject makes), per port.
 */
import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_CALL_ATTEMPTS } from "../../src/core/call-retry";
import { admin, api, endedView, hintedCompletion, isProbe, submitReplay, TWO_GPU_POOL, LIGHT_REPLAY } from "./helpers";

const POOL = TWO_GPU_POOL.map((i) => ({ ...i, requestTimeoutMs: 400 }));
const CALLS = LIGHT_REPLAY;

type Call = { id: string; instance: string; output?: string; attempts: number; failures: { instanceId: string; code: string; message: string }[] };
type View = { id: string; status: string; error?: { code: string; message: string }; stages: { calls: Call[] }[] };

const submit = (): Promise<string> => submitReplay(CALLS);
const ended = (id: string): Promise<View> => endedView<View>(id);

const calls = (v: View): Call[] => v.stages.flatMap((s) => s.calls);

type Fault = "refused" | "500" | "503" | "hang" | "cut" | "400";

/** A stream that sends one chunk and then breaks, as when the server dies mid-generation. */
function cutStream(): Response {
  const enc = new TextEncoder();
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("connection reset by peer"));
      sent = true;
      controller.enqueue(enc.encode(`data: ${JSON.stringify({ choices: [{ index: 0, text: "partial", finish_reason: null }] })}\n\n`));
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** vLLM per port: `faulty` ports fail as told, the others answer; every execution is counted by call id. */
function upstream(faults: Record<string, Fault>) {
  const executions = new Map<string, string[]>();
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    if (isProbe(input)) return new Response(null);
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const id = headers.get("x-hexflow-call-id") ?? "?";
    executions.set(id, [...(executions.get(id) ?? []), url.port]);
    switch (faults[url.port]) {
      case "refused":
        throw new TypeError("connect ECONNREFUSED");
      case "500":
      case "503":
      case "400": {
        const status = Number(faults[url.port]);
        return Response.json({ object: "error", message: status === 400 ? "This model's maximum context length is 8192 tokens" : "engine error", type: "Error", param: null, code: status }, { status });
      }
      case "hang":
        return new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
      case "cut":
        return cutStream();
      default:
        return hintedCompletion(headers);
    }
  });
  return executions;
}

beforeEach(async () => {
  for (const i of POOL) expect((await admin("/pools/default/instances", "POST", i)).status).toBe(201);
  // Health is tested in instance-health.test.ts; here a call's retry alone is at stake.
  expect((await admin("/pools/default/policy", "PUT", { health: { unhealthyAfter: 100 } })).status).toBe(200);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("failover of a failed call to another instance", () => {
  it.each([
    ["refused", "upstream_unreachable"],
    ["500", "upstream_error"],
    ["503", "upstream_error"],
    ["hang", "upstream_timeout"],
    ["cut", "upstream_unreachable"],
  ] as const)("a call that meets %s on one server runs on the other, and the workflow succeeds once", async (fault, code) => {
    const executions = upstream({ "9001": fault });
    const ids = [await submit(), await submit()];
    for (const id of ids) {
      const v = await ended(id);
      expect(v.status).toBe("succeeded");
      for (const c of calls(v)) {
        // A call that met the fault ran again on the other server, where it finished.
        expect(c.instance).toBe("l40s-1");
        for (const f of c.failures) expect(f).toMatchObject({ instanceId: "a100-0", code });
        const ports = executions.get(c.id) ?? [];
        expect(ports.at(-1)).toBe("9002");
        expect(ports.filter((p) => p === "9002")).toHaveLength(1);
      }
    }
    // The faulty server got some calls (or this test would prove nothing).
    expect([...executions.values()].some((p) => p.includes("9001"))).toBe(true);
  });

  it(`gives up after ${MAX_CALL_ATTEMPTS} executions of a call, failing the workflow with the last reason and the earlier ones`, async () => {
    const executions = upstream({ "9001": "500", "9002": "503" });
    const v = await ended(await submit());
    expect(v.status).toBe("failed");
    expect(v.error?.code).toBe("upstream_error");
    expect(v.error?.message).toMatch(new RegExp(`attempt ${MAX_CALL_ATTEMPTS} of ${MAX_CALL_ATTEMPTS}`));
    const first = calls(v)[0];
    expect(executions.get(first?.id ?? "")).toHaveLength(MAX_CALL_ATTEMPTS);
    expect(first?.failures).toHaveLength(MAX_CALL_ATTEMPTS);
    expect(first?.attempts).toBe(MAX_CALL_ATTEMPTS);
    // Each attempt went to an instance the call had not failed on while there was one.
    expect(new Set(first?.failures.slice(0, 2).map((f) => f.instanceId)).size).toBe(2);
    for (const ports of executions.values()) expect(ports.length).toBeLessThanOrEqual(MAX_CALL_ATTEMPTS);
  });

  it("does not retry a call the server refuses as a request (4xx): the workflow fails with vLLM's reason", async () => {
    const executions = upstream({ "9001": "400", "9002": "400" });
    const v = await ended(await submit());
    expect(v.status).toBe("failed");
    expect(v.error?.message).toMatch(/maximum context length/);
    expect([...executions.values()]).toEqual([[expect.any(String)]]);
    expect(calls(v)[0]).toMatchObject({ attempts: 1, failures: [expect.objectContaining({ code: "upstream_error" })] });
  });

  it("ignores a repeated report and a stale one (an earlier dispatch) by call id and dispatch number", async () => {
    upstream({ "9001": "500" });
    let v = await ended(await submit());
    while (!calls(v).some((c) => c.failures.length > 0)) v = await ended(await submit());
    const moved = calls(v).find((c) => c.failures.length > 0);
    if (moved === undefined) throw new Error("no call was retried");
    const stub = env.WORKFLOW.getByName(v.id);
    const report = (dispatch: number, text: string) => ({
      callId: moved.id, workflowId: v.id, dispatch, instanceId: "a100-0", enqueuedAt: 0, admittedAt: 0, finishedAt: 1, laxityS: 0,
      outcome: { ok: true as const, promptTokens: 1, completionTokens: 1, finishReason: "stop", text },
    });
    await stub.onCallDone(report(0, "stale"));
    await stub.onCallDone(report(1, "repeat"));
    await stub.onCallDone({ ...report(1, "failed again"), outcome: { ok: false, error: { code: "upstream_error", status: 500, message: "late" } } });
    const after = (await (await api(`/v1/workflows/${v.id}`)).json()) as View;
    expect(after).toEqual(v);
  });
});
