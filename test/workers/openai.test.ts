import { describe, expect, it, vi } from "vitest";
import { admin, api, hintedCompletion, isProbe, postJson as post, until, poolPerTest } from "./helpers";

const POOL = [{ id: "a100-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 }];
const WORDS = ["SELECT", " name", " FROM", " bikes"];

interface Seen {
  url: string;
  body: Record<string, unknown>;
}

/**
 * A vLLM that streams each word as its own SSE event, `gapMs` apart, in the endpoint's shape (chat
 * deltas or completion text), then usage and [DONE]; or fails with `status`.
 */
function streamingVllm(opts: { gapMs?: number; status?: number } = {}) {
  const seen: Seen[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = String(input);
    const body = JSON.parse(String(init?.body ?? "{}")) as Record<string, unknown>;
    seen.push({ url, body });
    if (opts.status !== undefined) return Response.json({ error: { message: `vLLM says no (${opts.status})`, type: "BadRequestError", param: null, code: opts.status } }, { status: opts.status });
    const chat = url.endsWith("/v1/chat/completions");
    const object = chat ? "chat.completion.chunk" : "text_completion";
    const piece = (text: string, finish: string | null) => ({ id: "x-1", object, choices: [chat ? { index: 0, delta: { content: text }, finish_reason: finish } : { index: 0, text, finish_reason: finish }] });
    const events: object[] = [
      ...(chat ? [{ id: "x-1", object, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }] : []),
      ...WORDS.map((w, i) => piece(w, i === WORDS.length - 1 ? "stop" : null)),
      { id: "x-1", object, choices: [], usage: { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length } },
    ];
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const e of events) {
          controller.enqueue(enc.encode(`data: ${JSON.stringify(e)}\n\n`));
          if (opts.gapMs !== undefined) await new Promise((r) => setTimeout(r, opts.gapMs));
        }
        controller.enqueue(enc.encode("data: [DONE]\n\n"));
        controller.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  return { seen, spy };
}

interface WorkflowView {
  status: string;
  sloMs: number;
  stages: { step: string; calls: { instance: string; budgetMs: number; deadlineMs: number; completionTokens: number | null; output?: string }[] }[];
}

async function workflowOf(res: Response): Promise<WorkflowView> {
  const id = res.headers.get("x-hexflow-workflow-id");
  expect(id).toMatch(/^wf_[0-9a-f]{32}$/);
  return until(async () => {
    const v = (await (await api(`/v1/workflows/${id}`)).json()) as WorkflowView;
    return v.status === "running" || v.status === "queued" ? undefined : v;
  });
}

/** The `data:` payloads of an SSE body, in order. */
async function sseData(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .map((e) => e.trim())
    .filter((e) => e.startsWith("data: "))
    .map((e) => e.slice(6));
}

poolPerTest(POOL);

describe("OpenAI-compatible chat and completions, scheduled as one-call workflows", () => {
  it("answers a non-streamed chat completion through the scheduler, forwarding messages and sampling", async () => {
    const vllm = streamingVllm();
    const messages = [
      { role: "system", content: "You write SQL." },
      { role: "user", content: [{ type: "text", text: "all bike names" }] },
    ];
    const res = await post("/v1/chat/completions", { model: "llama-3.1-70b", messages, max_tokens: 32, temperature: 0.2, top_p: 0.9, stop: "###", seed: 7, user: "ignored" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; object: string; model: string; choices: { message: { role: string; content: string }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
    expect(body.object).toBe("chat.completion");
    expect(body.id).toBe(`chatcmpl-${res.headers.get("x-hexflow-workflow-id")}`);
    expect(body.model).toBe("llama-3.1-70b");
    expect(body.choices[0]).toMatchObject({ message: { role: "assistant", content: WORDS.join("") }, finish_reason: "stop" });
    expect(body.usage).toEqual({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    expect(vllm.seen).toHaveLength(1);
    expect(vllm.seen[0]?.url).toBe("http://127.0.0.1:9001/v1/chat/completions");
    expect(vllm.seen[0]?.body).toEqual({
      model: "llama-3.1-70b",
      messages: [messages[0], { role: "user", content: "all bike names" }],
      max_tokens: 32,
      temperature: 0.2,
      top_p: 0.9,
      stop: ["###"],
      seed: 7,
      stream: true,
      stream_options: { include_usage: true },
    });
    // It really was a workflow: one stage, one call, bound to an instance of the pool, finished.
    const wf = await workflowOf(res);
    expect(wf.status).toBe("succeeded");
    expect(wf.stages).toHaveLength(1);
    expect(wf.stages[0]?.step).toBe("chat");
    expect(wf.stages[0]?.calls[0]).toMatchObject({ instance: "a100-0", completionTokens: 4, output: WORDS.join("") });
  });

  it("answers a non-streamed completion on /v1/completions", async () => {
    const vllm = streamingVllm();
    const res = await post("/v1/completions", { prompt: "-- bikes\nSELECT", max_tokens: 8 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; object: string; choices: { text: string; finish_reason: string }[]; usage: { completion_tokens: number } };
    expect(body.object).toBe("text_completion");
    expect(body.id).toMatch(/^cmpl-wf_/);
    expect(body.choices[0]).toMatchObject({ text: WORDS.join(""), finish_reason: "stop" });
    expect(vllm.seen[0]?.url).toBe("http://127.0.0.1:9001/v1/completions");
    expect(vllm.seen[0]?.body).toMatchObject({ prompt: "-- bikes\nSELECT", max_tokens: 8, stream: true });
    expect(vllm.seen[0]?.body).not.toHaveProperty("messages");
    expect((await workflowOf(res)).stages[0]?.step).toBe("completion");
  });

  it("streams a chat completion: the role, then the deltas in order as they arrive, the finish, usage, [DONE]", async () => {
    streamingVllm({ gapMs: 40 });
    const res = await post("/v1/chat/completions", { messages: [{ role: "user", content: "names?" }], max_tokens: 16, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const data = await sseData(res);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { id: string; object: string; choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[]; usage?: { completion_tokens: number } });
    for (const ch of chunks) expect(ch.object).toBe("chat.completion.chunk");
    expect(new Set(chunks.map((ch) => ch.id)).size).toBe(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const contents = chunks.flatMap((ch) => ch.choices.map((c) => c.delta.content ?? "")).filter((t) => t.length > 0);
    // The words were 40 ms apart upstream: they reach the client as separate chunks, in order.
    expect(contents).toEqual(WORDS);
    const finish = chunks.flatMap((ch) => ch.choices.map((c) => c.finish_reason)).filter((f) => f !== null);
    expect(finish).toEqual(["stop"]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 4 } });
  });

  it("streams a completion as text_completion chunks, without a usage chunk unless asked", async () => {
    streamingVllm();
    const res = await post("/v1/completions", { prompt: "SELECT", max_tokens: 4, stream: true });
    const data = await sseData(res);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { object: string; choices: { text: string }[]; usage?: unknown });
    expect(chunks.every((ch) => ch.object === "text_completion" && ch.usage === undefined)).toBe(true);
    expect(chunks.map((ch) => ch.choices[0]?.text ?? "").join("")).toBe(WORDS.join(""));
  });

  it("takes the deadline from X-SLO-Ms (pool-clock ms): the call's budget is the whole SLO", async () => {
    streamingVllm();
    const res = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 4 }, { "X-SLO-Ms": "7000" });
    expect(res.status).toBe(200);
    const wf = await workflowOf(res);
    expect(wf.sloMs).toBe(7000);
    const call = wf.stages[0]?.calls[0];
    // One stage: its budget is the SLO less the (emulated, 20x) time between arrival and release: the
    // tenant's quota and the pool's admission are two RPCs on that path, 100 ms of real time on a busy machine.
    expect(call?.budgetMs).toBeGreaterThan(5000);
    expect(call?.budgetMs).toBeLessThanOrEqual(7000);
    expect(call?.deadlineMs).toBeCloseTo(7000, 0);
  });

  it("without X-SLO-Ms uses the default: 5x the call's own no-queueing time, far below a CHESS workflow's", async () => {
    streamingVllm();
    const res = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
    const wf = await workflowOf(res);
    expect(wf.sloMs).toBeGreaterThan(0);
    expect(wf.sloMs).toBeLessThan(5000);
  });

  it("refuses bad input with a 400 OpenAI-style error (house code + message too) and schedules nothing", async () => {
    const vllm = streamingVllm();
    const chat = { messages: [{ role: "user", content: "hi" }] };
    const cases: [string, unknown, Record<string, string>, string | null][] = [
      ["/v1/chat/completions", chat, { "X-SLO-Ms": "soon" }, "X-SLO-Ms"],
      ["/v1/chat/completions", chat, { "X-SLO-Ms": "0" }, "X-SLO-Ms"],
      ["/v1/chat/completions", chat, { "X-SLO-Ms": "-5" }, "X-SLO-Ms"],
      ["/v1/chat/completions", chat, { "X-SLO-Ms": "86400001" }, "X-SLO-Ms"],
      ["/v1/chat/completions", chat, { "X-Hexflow-Pool": "Not A Pool" }, "X-Hexflow-Pool"],
      ["/v1/chat/completions", "{not json", {}, null],
      ["/v1/chat/completions", { messages: [] }, {}, "messages"],
      ["/v1/chat/completions", { messages: [{ role: "wizard", content: "hi" }] }, {}, "messages"],
      ["/v1/chat/completions", { ...chat, n: 2 }, {}, "n"],
      ["/v1/chat/completions", { ...chat, max_tokens: 100_000 }, {}, "max_tokens"],
      ["/v1/chat/completions", { ...chat, tools: [{ type: "function" }] }, {}, "tools"],
      ["/v1/chat/completions", { ...chat, stream_options: { include_usage: true } }, {}, "stream_options"],
      ["/v1/completions", { prompt: ["a", "b"] }, {}, "prompt"],
      ["/v1/completions", { max_tokens: 5 }, {}, "prompt"],
    ];
    for (const [path, body, headers, param] of cases) {
      const res = await post(path, body, headers);
      expect(res.status, JSON.stringify([body, headers])).toBe(400);
      const e = (await res.json()) as { error: { code: string; message: string; type: string; param: string | null } };
      expect(e.error).toMatchObject({ code: "invalid_request", type: "invalid_request_error", param });
      expect(e.error.message.length).toBeGreaterThan(0);
      expect(res.headers.get("x-hexflow-workflow-id")).toBeNull();
    }
    const unknownModel = await post("/v1/chat/completions", { ...chat, model: "gpt-4o" });
    expect(unknownModel.status).toBe(404);
    expect(((await unknownModel.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    expect(vllm.seen).toHaveLength(0);
  });

  it("maps upstream failures: vLLM's 400 stays a 400, a 5xx becomes 502, streamed or not, and the workflow failed", async () => {
    streamingVllm({ status: 400 });
    const rejected = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
    expect(rejected.status).toBe(400);
    expect(await rejected.json()).toMatchObject({ error: { code: "upstream_rejected", message: "vLLM says no (400)", type: "invalid_request_error" } });
    expect((await workflowOf(rejected)).status).toBe("failed");
    vi.restoreAllMocks();
    // Every server answering 500 soon counts as unhealthy, and then the answer is 503 (no instance): the
    // mapping of the upstream's status is what is tested here (instance-health.test.ts tests health).
    expect((await admin("/pools/default/policy", "PUT", { health: { unhealthyAfter: 100 } })).status).toBe(200);
    streamingVllm({ status: 500 });
    for (const stream of [false, true]) {
      const res = await post("/v1/completions", { prompt: "x", max_tokens: 4, stream });
      expect(res.status).toBe(502);
      const e = (await res.json()) as { error: { code: string; message: string; type: string } };
      expect(e.error).toMatchObject({ code: "upstream_error", type: "server_error" });
      expect(e.error.message).toContain("500");
      expect((await workflowOf(res)).status).toBe("failed");
    }
  });

  it.each([false, true])("follows a call that fails before writing anything to its next attempt: one answer, stream %s", async (stream) => {
    // The first attempt meets a 503 (retried, core/call-retry); the second streams the answer.
    let generations = 0;
    const inner = streamingVllm();
    inner.spy.mockRestore();
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      if (isProbe(input)) return new Response(null);
      generations += 1;
      if (generations === 1) return Response.json({ error: { message: "engine restarting", type: "ServiceUnavailableError", param: null, code: 503 } }, { status: 503 });
      return hintedCompletion(new Headers(init?.headers));
    });
    const res = await post("/v1/completions", { prompt: "x", max_tokens: 3, stream });
    expect(res.status).toBe(200);
    const body = stream ? (await sseData(res)).join("\n") : JSON.stringify(await res.json());
    expect(body).not.toMatch(/error/);
    expect(body).toMatch(/tok/);
    expect(generations).toBe(2);
    const v = (await workflowOf(res)) as WorkflowView & { stages: { calls: { attempts: number }[] }[] };
    expect(v.status).toBe("succeeded");
    expect(v.stages[0]?.calls[0]?.attempts).toBe(2);
  });

  it("answers 503 when the pool has no instance", async () => {
    const res = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }, { "X-Hexflow-Pool": "empty" });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("no_instance");
  });
});
