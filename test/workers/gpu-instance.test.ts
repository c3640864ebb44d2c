import { env } from "cloudflare:workers";
import { reset, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { InstanceRegistrationSchema, toRecord } from "../../src/core/pool";
import type { ReleasedCall } from "../../src/core/workflow-run";
import { GpuInstanceObject } from "../../src/objects/gpu-instance";
import { sseCompletion, until } from "./helpers";

afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

const record = toRecord(InstanceRegistrationSchema.parse({ id: "g0", url: "http://127.0.0.1:9", gpu: "A100", maxConcurrency: 1 }), 0);

function call(id: string, deadlineS: number): ReleasedCall {
  return { id, workflowId: `wf-${id}`, stageIndex: 0, step: "s", inputTokens: 100, outputTokens: 5, expectedOutputTokens: 5, releasedAt: 0, budgetS: deadlineS, deadlineS };
}

/**
 * vLLM that answers only when the test says so, in arrival order. The wait polls a plain counter
 * inside the object's own context: a promise resolved from the test's context would be I/O that
 * crosses Durable Objects, which workerd forbids.
 */
function gatedVllm() {
  const order: string[] = [];
  let opened = 0;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
    const position = order.length;
    order.push(new Headers(init?.headers).get("x-hexflow-call-id") ?? "?");
    while (opened <= position) await new Promise((r) => setTimeout(r, 5));
    return sseCompletion(100, 5);
  });
  return {
    order,
    open: () => {
      opened += 1;
    },
  };
}

describe("GpuInstanceObject", () => {
  it("admits the least-laxity call first once capacity frees up, and records the order", async () => {
    const vllm = gatedVllm();
    const stub = env.GPU_INSTANCE.getByName("default/g0");
    await stub.configure(record, "default", "pq");
    // 'first' takes the only slot; the others queue. Estimates differ, so laxity D - t̂ orders them:
    // late (D 900, t̂ 1) 899 > short (D 500, t̂ 1) 499 > long (D 520, t̂ 100) 420.
    await stub.enqueue([{ call: call("first", 10_000), estimateS: 1 }], "pq");
    await stub.enqueue([{ call: call("late", 900), estimateS: 1 }, { call: call("short", 500), estimateS: 1 }, { call: call("long", 520), estimateS: 100 }], "pq");
    expect(await stub.stats()).toMatchObject({ queued: 3, running: 1 });
    // The queue is persisted, not only in memory.
    await runInDurableObject(stub, (_obj, state) => {
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM queue").one().n).toBe(3);
    });
    for (let i = 0; i < 4; i++) {
      await until(async () => (vllm.order.length > i ? true : undefined));
      vllm.open();
    }
    await until(async () => ((await stub.stats()).running === 0 ? true : undefined));
    expect(vllm.order).toEqual(["first", "long", "short", "late"]);
    const s = await stub.stats();
    expect(s.admissions.map((a) => a.callId)).toEqual(["first", "long", "short", "late"]);
    expect(s.admissions.map((a) => a.key)).toEqual([9999, 420, 499, 899]);
  });

  it("re-keys its queue when the pool switches policy (here to FCFS)", async () => {
    const vllm = gatedVllm();
    const stub = env.GPU_INSTANCE.getByName("default/g0");
    await stub.configure(record, "default", "pq");
    await stub.enqueue([{ call: call("first", 10_000), estimateS: 1 }], "pq");
    await stub.enqueue([{ call: call("a", 900), estimateS: 1 }], "pq");
    await stub.enqueue([{ call: call("b", 100), estimateS: 1 }], "pq");
    await stub.configure(record, "default", "fcfs");
    for (let i = 0; i < 3; i++) {
      await until(async () => (vllm.order.length > i ? true : undefined));
      vllm.open();
    }
    expect(vllm.order).toEqual(["first", "a", "b"]);
  });

  it("ignores a call it already holds (a repeated enqueue)", async () => {
    gatedVllm();
    const stub = env.GPU_INSTANCE.getByName("default/g0");
    await stub.configure(record, "default", "pq");
    await stub.enqueue([{ call: call("x", 10), estimateS: 1 }, { call: call("y", 10), estimateS: 1 }], "pq");
    expect(await stub.enqueue([{ call: call("x", 10), estimateS: 1 }, { call: call("y", 10), estimateS: 1 }], "pq")).toEqual({ queued: 1 });
  });

  it("watchdog alarm: a call vLLM never answers fails with a timeout, and the next call is admitted", async () => {
    // vLLM hangs on every call; the record's timeout is 1 ms of real time.
    const order: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation((_input, init) => {
      order.push(new Headers(init?.headers).get("x-hexflow-call-id") ?? "?");
      return new Promise<Response>(() => {});
    });
    const stub = env.GPU_INSTANCE.getByName("default/g0");
    await stub.configure({ ...record, requestTimeoutMs: 1 }, "default", "pq");
    await stub.enqueue([{ call: call("stuck", 10), estimateS: 1 }, { call: call("next", 20), estimateS: 1 }], "pq");
    expect(await stub.stats()).toMatchObject({ queued: 1, running: 1 });
    await new Promise((r) => setTimeout(r, 5));
    // The alarm was armed by the enqueue; running it now fails the overdue call and admits the next.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.stats()).toMatchObject({ queued: 0, running: 1 });
    expect(order).toEqual(["stuck", "next"]);
    // Running it again is harmless: 'next' is overdue too by now and goes the same way; nothing twice.
    await new Promise((r) => setTimeout(r, 5));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.stats()).toMatchObject({ queued: 0, running: 0 });
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });

  it("a restarted instance reports the calls its previous self had running as failed attempts, through its outbox, and keeps its queue", async () => {
    const order: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation((_input, init) => {
      order.push(new Headers(init?.headers).get("x-hexflow-call-id") ?? "?");
      return new Promise<Response>(() => {});
    });
    const stub = env.GPU_INSTANCE.getByName("default/g0");
    await stub.configure(record, "default", "pq");
    await stub.enqueue([{ call: call("lost", 10), estimateS: 1 }, { call: call("waiting", 20), estimateS: 1 }], "pq");
    expect(await stub.stats()).toMatchObject({ queued: 1, running: 1 });
    const afterRestart = await runInDurableObject(stub, async (_obj, state) => {
      // A fresh object on the same storage is what a restart or deploy leaves.
      const fresh = new GpuInstanceObject(state, env);
      await state.blockConcurrencyWhile(async () => {});
      const before = fresh.stats();
      const alarmAt = await state.storage.getAlarm();
      const outbox = state.storage.sql.exec<{ json: string }>("SELECT json FROM outbox").toArray().map((r) => JSON.parse(r.json) as { callId: string; dispatch: number; outcome: { ok: boolean; error?: { code: string } }; call?: { id: string } });
      return { before, alarmDue: alarmAt !== null && alarmAt <= Date.now(), outbox };
    });
    // The orphan is not re-sent here: it goes back to its workflow (which spends an attempt on it), whole.
    expect(afterRestart.before).toMatchObject({ queued: 1, running: 0 });
    expect(afterRestart.alarmDue).toBe(true);
    expect(afterRestart.outbox).toEqual([expect.objectContaining({ callId: "lost", dispatch: 0, outcome: { ok: false, error: expect.objectContaining({ code: "instance_restarted" }) }, call: expect.objectContaining({ id: "lost" }) })]);
    expect(order).toEqual(["lost"]);
  });
});
