/**
 * The OpenAI-compatible endpoints when the client goes away: its workflow is cancelled and its queued call leaves the
 * instance, whether it streams, aborts while waiting, or aborts before the endpoint could listen.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/api/app";
import { admin, api, isProbe, postJson as post, until, poolPerTest } from "./helpers";
import { TEST_KEY } from "./tenant-fixture";

interface WorkflowView {
  status: string;
}

poolPerTest([{ id: "a100-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 }]);

describe("OpenAI-compatible endpoints when the client goes away", () => {
  /** One slot on a100-0, held by a call vLLM does not answer until `release()`: the next call waits in hexflow's queue. */
  async function busyInstance() {
    expect((await admin("/pools/default/instances/a100-0", "PATCH", { maxConcurrency: 1 })).status).toBe(200);
    let released = false;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      // Health probes answer at once: a held probe would time out and take a100-0 out of dispatch, and the next
      // call would then queue elsewhere (what made this test flaky under a full CI run's load).
      if (isProbe(input)) return new Response(null, { status: 200 });
      while (!released) await new Promise((r) => setTimeout(r, 10));
      // A 400 ends the held call at once (a 5xx would be retried: core/call-retry).
      return Response.json({ error: { message: "done waiting" } }, { status: 400 });
    });
    const queue = async () => (await (await admin("/pools/default/instances/a100-0/queue", "GET")).json()) as { queued: number; running: number };
    const busy = post("/v1/completions", { prompt: "first", max_tokens: 4 });
    await until(async () => ((await queue()).running === 1 ? true : undefined));
    return { queue, busy, release: () => (released = true) };
  }

  /** A second chat call made in this context, as a client whose going away the endpoint can see. */
  const secondChat = (extra: { stream?: true; signal?: AbortSignal }) =>
    new Request("http://gateway.test/v1/chat/completions", { method: "POST", ...(extra.signal === undefined ? {} : { signal: extra.signal }), headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEY}` }, body: JSON.stringify({ messages: [{ role: "user", content: "second" }], max_tokens: 4, ...(extra.stream === undefined ? {} : { stream: true }) }) });

  /** The second call's workflow was cancelled and its queued call left the instance; the first then ends. */
  async function expectCancelled(res: Response, { queue, busy, release }: Awaited<ReturnType<typeof busyInstance>>) {
    const v = (await (await api(`/v1/workflows/${res.headers.get("x-hexflow-workflow-id")}`)).json()) as WorkflowView;
    expect(v.status).toBe("cancelled");
    expect((await queue()).queued).toBe(0);
    release();
    expect((await busy).status).toBe(400);
  }

  // Both run in this context (not through the Worker's service binding, which passes neither a reader's
  // cancel nor an abort on), so the endpoint sees them as it sees a client going away.
  it("cancels the workflow when a streaming client goes away: its queued call leaves the instance", async () => {
    const first = await busyInstance();
    const ctx = createExecutionContext();
    const res = await app.fetch(secondChat({ stream: true }), env, ctx);
    expect(res.status).toBe(200);
    expect((await first.queue()).queued).toBe(1);
    const reader = res.body?.getReader();
    expect((await reader?.read())?.done).toBe(false); // the role chunk: headers went out while the call is queued
    await reader?.cancel();
    await waitOnExecutionContext(ctx);
    await expectCancelled(res, first);
  }, 20_000);

  it("cancels the workflow when a non-streamed client goes away (request.signal, enable_request_signal)", async () => {
    const { queue, busy, release } = await busyInstance();
    const ctx = createExecutionContext();
    const abort = new AbortController();
    const pending = app.fetch(secondChat({ signal: abort.signal }), env, ctx);
    await until(async () => ((await queue()).queued === 1 ? true : undefined), 10_000);
    abort.abort();
    await until(async () => ((await queue()).queued === 0 ? true : undefined), 10_000);
    release();
    expect((await busy).status).toBe(400);
    await Promise.resolve(pending).catch(() => undefined);
    await waitOnExecutionContext(ctx);
  }, 30_000);

  it("cancels the workflow when the client went away before the call was placed", async () => {
    const first = await busyInstance();
    const ctx = createExecutionContext();
    const abort = new AbortController();
    const pending = app.fetch(secondChat({ signal: abort.signal }), env, ctx);
    // Gone before the endpoint could listen: the workflow still starts, then must be cancelled.
    abort.abort();
    const res = await pending;
    await waitOnExecutionContext(ctx);
    await expectCancelled(res, first);
  }, 30_000);
});
