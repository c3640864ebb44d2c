/**
 * Issue 8, restarts: Durable Objects rebuilt from their SQLite storage (a fresh object on the same
 * storage is what an eviction or a deploy leaves), and the workflow watchdog. Each test asserts the
 * invariant: the workflow ends exactly once, succeeded or failed with a reason.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { STEP } from "../../src/core/chess";
import { GpuInstanceObject } from "../../src/objects/gpu-instance";
import { WorkflowObject } from "../../src/objects/workflow";
import { WorkflowStore } from "../../src/objects/workflow-store";
import { completeCall } from "../../src/core/workflow-run";
import { admin, api, endedView, hintedCompletion, isProbe, submitReplay, until, poolPerTest, TWO_GPU_POOL } from "./helpers";

const POOL = TWO_GPU_POOL;
const CALLS = [{ step: STEP.retriever, inputTokens: 301, outputTokens: 5 }];
type View = { id: string; status: string; error?: { code: string; message: string }; stages: { calls: { id: string; instance: string; failures: { code: string; instanceId: string }[] }[] }[] };

const submit = (): Promise<string> => submitReplay(CALLS);
const view = async (id: string): Promise<View> => (await (await api(`/v1/workflows/${id}`)).json()) as View;
const ended = (id: string): Promise<View> => endedView<View>(id);

/** vLLM whose generation waits until open() (every port), counting executions per call id. */
function gatedUpstream() {
  const gate = { open: false, executions: new Map<string, number>() };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    if (isProbe(input)) return new Response(null);
    const h = new Headers(init?.headers);
    const id = h.get("x-hexflow-call-id") ?? "?";
    gate.executions.set(id, (gate.executions.get(id) ?? 0) + 1);
    while (!gate.open) await new Promise((r) => setTimeout(r, 5));
    return hintedCompletion(h);
  });
  return gate;
}

poolPerTest(POOL);

describe("restarts", () => {
  it("an instance restarted mid-call hands the call back; it runs elsewhere and the workflow succeeds once", async () => {
    const gate = gatedUpstream();
    await admin("/pools/default/instances/l40s-1/drain", "POST");
    const id = await submit();
    const a100 = env.GPU_INSTANCE.getByName("default/a100-0");
    await until(async () => ((await a100.stats()).running === 1 ? true : undefined));
    await admin("/pools/default/instances/l40s-1/activate", "POST");
    await runInDurableObject(a100, async (_obj, state) => {
      const fresh = new GpuInstanceObject(state, env);
      await state.blockConcurrencyWhile(async () => {});
      await fresh.alarm();
    });
    gate.open = true;
    const v = await ended(id);
    expect(v.status).toBe("succeeded");
    const call = v.stages[0]?.calls[0];
    expect(call?.failures).toEqual([expect.objectContaining({ code: "instance_restarted", instanceId: "a100-0" })]);
    expect(call?.instance).toBe("l40s-1");
    expect(gate.executions.get(call?.id ?? "")).toBe(2);
    // The old object's late answer for the same call was a stale report: nothing changed after the end.
    await new Promise((r) => setTimeout(r, 100));
    expect(await view(id)).toEqual(v);
  });

  it("a workflow restarted between deciding a re-send and making it resumes it from its alarm", async () => {
    const gate = gatedUpstream();
    const id = await submit();
    const stub = env.WORKFLOW.getByName(id);
    const callId = await until(async () => (await view(id)).stages[0]?.calls[0]?.id);
    // What a crash right after the decision leaves: the re-send persisted, the call on its next dispatch, no RPC made.
    const failedOn = (await view(id)).stages[0]?.calls[0]?.instance ?? "";
    await runInDurableObject(stub, async (_obj, state) => {
      const store = new WorkflowStore(state.storage.sql);
      const rec = store.call(callId);
      const meta = store.meta();
      if (rec === undefined || meta === undefined) throw new Error("no call record");
      store.saveCall({ ...rec, dispatch: 1, failures: [{ instanceId: rec.instanceId, code: "upstream_unreachable", message: "lost" }] });
      const { prompt: _p, ...spec } = meta.state.spec.stages[0]?.calls[0] ?? { step: "", inputTokens: 0, outputTokens: 1 };
      store.saveRedispatch({ call: { ...spec, id: callId, workflowId: id, stageIndex: 0, expectedOutputTokens: 5, releasedAt: rec.releasedAt, budgetS: rec.budgetS, deadlineS: rec.deadlineS, dispatch: 1 }, avoid: [rec.instanceId] });
      const fresh = new WorkflowObject(state, env);
      await fresh.alarm();
    });
    const moved = await view(id);
    expect(moved.stages[0]?.calls[0]?.instance).not.toBe(failedOn);
    gate.open = true;
    const v = await ended(id);
    expect(v.status).toBe("succeeded");
    // Dispatch 0 still ran on the first server and answered: a stale report, ignored; dispatch 1 counted.
    expect(gate.executions.get(callId)).toBe(2);
    expect(await runInDurableObject(stub, (_obj, state) => new WorkflowStore(state.storage.sql).redispatches())).toEqual([]);
  });

  it("a stage release a restart interrupted resumes from the tick; each call runs once", async () => {
    const gate = gatedUpstream();
    const two = [...CALLS, { step: STEP.candidate, inputTokens: 900, outputTokens: 20 }];
    const id = await submitReplay(two);
    const stub = env.WORKFLOW.getByName(id);
    const first = await until(async () => (await view(id)).stages[0]?.calls[0]?.id);
    await until(async () => ((gate.executions.get(first) ?? 0) > 0 ? true : undefined));
    // What a crash right after the first stage's end leaves: the call finished, the next stage not released.
    await runInDurableObject(stub, async (_obj, state) => {
      const store = new WorkflowStore(state.storage.sql);
      const meta = store.meta();
      const rec = store.call(first);
      if (meta === undefined || rec === undefined) throw new Error("no workflow");
      store.saveCall({ ...rec, finishedAt: rec.releasedAt + 1, completionTokens: 5, output: "x" });
      expect(completeCall(meta.state, first, rec.releasedAt + 1)).toBe("stage-done");
      store.saveMeta({ ...meta, progressAtMs: Date.now() - 60_000 });
      await new WorkflowObject(state, env).alarm();
    });
    const second = await until(async () => (await view(id)).stages[1]?.calls[0]?.id);
    gate.open = true;
    const v = await ended(id);
    expect(v.status).toBe("succeeded");
    expect([gate.executions.get(first), gate.executions.get(second)]).toEqual([1, 1]);
  });

  it("a call its instance lost (neither queued, running nor reported) is found by the tick and sent again", async () => {
    const gate = gatedUpstream();
    await admin("/pools/default/instances/l40s-1/drain", "POST");
    await admin("/pools/default/instances/a100-0", "PATCH", { maxConcurrency: 1 });
    const ids = [await submit(), await submit()];
    const a100 = env.GPU_INSTANCE.getByName("default/a100-0");
    await until(async () => ((await a100.stats()).queued === 1 ? true : undefined));
    const lostId = ids[1] ?? "";
    const lost = await until(async () => (await view(lostId)).stages[0]?.calls[0]?.id);
    expect(await a100.holds([lost])).toEqual([lost]);
    // What losing it looks like: the instance drops it without a word (its cancel reports nothing).
    expect(await a100.cancel([lost])).toEqual([lost]);
    expect(await a100.holds([lost])).toEqual([]);
    const stub = env.WORKFLOW.getByName(lostId);
    await runInDurableObject(stub, async (_obj, state) => {
      const store = new WorkflowStore(state.storage.sql);
      const meta = store.meta();
      if (meta === undefined) throw new Error("no meta");
      store.saveMeta({ ...meta, progressAtMs: Date.now() - 60_000 });
      for (const r of store.redispatches()) store.saveRedispatch({ ...r, sentAtMs: Date.now() - 60_000 });
    });
    await runDurableObjectAlarm(stub);
    gate.open = true;
    for (const id of ids) expect((await ended(id)).status).toBe("succeeded");
    const call = (await view(lostId)).stages[0]?.calls[0];
    expect(call?.failures).toEqual([expect.objectContaining({ code: "call_lost", instanceId: "a100-0" })]);
    expect(gate.executions.get(lost)).toBe(1);
  });

  it("the watchdog fails a workflow with no progress for the bound, naming what it waited on, once", async () => {
    gatedUpstream();
    const id = await submit();
    const stub = env.WORKFLOW.getByName(id);
    await until(async () => ((await view(id)).stages[0]?.calls[0] === undefined ? undefined : true));
    // Within the bound the alarm only re-arms.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await view(id)).status).toBe("running");
    await runInDurableObject(stub, (_obj, state) => {
      const store = new WorkflowStore(state.storage.sql);
      const meta = store.meta();
      if (meta === undefined) throw new Error("no meta");
      store.saveMeta({ ...meta, progressAtMs: Date.now() - (Number(env.WORKFLOW_STALL_S) + 1) * 1000 });
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const v = await view(id);
    expect(v.status).toBe("failed");
    expect(v.error?.code).toBe("stalled");
    expect(v.error?.message).toMatch(new RegExp(`no progress for \\d+ s .*waiting on ${v.stages[0]?.calls[0]?.id}`));
    // Running the alarm again changes nothing: the end happened once.
    await runDurableObjectAlarm(stub);
    expect(await view(id)).toEqual(v);
  });
});
