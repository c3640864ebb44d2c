import { env } from "cloudflare:workers";
import { reset, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startWorkflow } from "../../src/core/workflow-run";
import { CoordinatorObject, type PoolView } from "../../src/objects/coordinator";
import { sseCompletion, until } from "./helpers";

afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

/** vLLM that holds every answer until the test releases it (polled inside the object's context). */
function heldVllm() {
  let open = false;
  let requests = 0;
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
    requests += 1;
    while (!open) await new Promise((r) => setTimeout(r, 5));
    return sseCompletion(100, 5);
  });
  return {
    requests: () => requests,
    release: () => {
      open = true;
    },
  };
}

const counts = (v: PoolView) => v.instances.map((i) => ({ id: i.id, queued: i.queued, running: i.running }));

describe("CoordinatorObject", () => {
  it("keeps outstanding load in memory and rebuilds it from the instances after a restart", async () => {
    const vllm = heldVllm();
    const stub = env.COORDINATOR.getByName("default");
    expect((await stub.register("default", { id: "g0", url: "http://127.0.0.1:9", gpu: "A100", maxConcurrency: 1 })).ok).toBe(true);
    const spec = { kind: "replay", template: ["candidate"], stages: [{ step: "candidate", calls: [0, 1, 2].map(() => ({ step: "candidate", inputTokens: 1000, outputTokens: 50 })) }] };
    const r = await stub.releaseStage(startWorkflow("wf-restart", spec, 0, 600));
    if (!r.ok) throw new Error(r.error.message);
    await env.GPU_INSTANCE.getByName("default/g0").enqueue(
      r.dispatched.map((d) => ({ call: d.call, estimateS: d.estimateS })),
      r.queuePolicy,
    );
    await until(async () => (vllm.requests() === 1 ? true : undefined));
    const before = await until(async () => {
      const v = await stub.pool();
      return v.instances[0]?.running === 1 ? v : undefined;
    });
    expect(counts(before)).toEqual([{ id: "g0", queued: 2, running: 1 }]);
    // Nothing about the load is in storage any more...
    await runInDurableObject(stub, (_obj, state) => {
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'outstanding'").one().n).toBe(0);
    });
    // ...yet a fresh object on the same storage (what a restart is) sees the same load.
    const after = await runInDurableObject(stub, async (_obj, state) => {
      const fresh = new CoordinatorObject(state, env);
      await state.blockConcurrencyWhile(async () => {});
      return fresh.pool();
    });
    expect(counts(after)).toEqual(counts(before));
    expect(after.instances[0]?.loadS ?? 0).toBeGreaterThan(0);
    vllm.release();
  });
});
