import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startEmulator, type EmulatorHandle } from "../../src/emulator";
import { ErrorBodySchema, MODEL, UsageSchema, post, readSse, sized } from "./emulator-client";

let emu: EmulatorHandle;
beforeAll(async () => {
  emu = await startEmulator({ gpu: "A100", timeScale: 200, seed: 7 });
});
afterAll(() => emu.close());

const CompletionSchema = z.object({
  id: z.string().startsWith("cmpl-"),
  object: z.literal("text_completion"),
  created: z.number().int(),
  model: z.literal(MODEL),
  choices: z.array(
    z.object({ index: z.literal(0), text: z.string(), logprobs: z.null(), finish_reason: z.enum(["stop", "length"]), stop_reason: z.string().nullable() }),
  ),
  usage: UsageSchema,
});

const ChatSchema = z.object({
  id: z.string().startsWith("chatcmpl-"),
  object: z.literal("chat.completion"),
  choices: z.array(z.object({ message: z.object({ role: z.literal("assistant"), content: z.string() }), finish_reason: z.string() })),
  usage: UsageSchema,
});

describe("emulator: discovery endpoints", () => {
  it("serves /v1/models with max_model_len, /health empty, /version", async () => {
    const models = z
      .object({ object: z.literal("list"), data: z.array(z.object({ id: z.string(), object: z.literal("model"), owned_by: z.literal("vllm"), root: z.string(), max_model_len: z.number() })) })
      .parse(await (await fetch(`${emu.url}/v1/models`)).json());
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({ id: MODEL, root: "meta-llama/Llama-3.1-70B-Instruct", max_model_len: 32_768 });
    const health = await fetch(`${emu.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("");
    expect(await (await fetch(`${emu.url}/version`)).json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect((await fetch(`${emu.url}/nope`)).status).toBe(404);
  });

  it("exposes vLLM's series with model_name and engine labels, and the time scale", async () => {
    const text = await (await fetch(`${emu.url}/metrics`)).text();
    for (const name of ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:num_preemptions_total"]) {
      expect(text).toContain(`${name}{model_name="${MODEL}",engine="0"}`);
    }
    expect(text).toContain('vllm:request_success_total{finished_reason="abort",model_name="llama-3.1-70b",engine="0"}');
    expect(text).toMatch(/vllm:cache_config_info\{block_size="16",num_gpu_blocks="25000"/);
    expect(text).toMatch(/hexflow_emulator_time_scale\{gpu="A100",[^}]*\} 200/);
    expect(text).toContain('vllm:time_to_first_token_seconds_bucket{le="2560"');
    expect(text).toContain('vllm:e2e_request_latency_seconds_bucket{le="7680"');
    expect(text).toMatch(/# HELP vllm:e2e_request_latency_seconds .*[Ee]mulated seconds/);
  });
});

describe("emulator: completions", () => {
  it("answers a non-streamed completion with exact usage and finish_reason", async () => {
    const res = await post(`${emu.url}/v1/completions`, { model: MODEL, prompt: "x".repeat(400), max_tokens: 12, unknown_field: 1 });
    expect(res.status).toBe(200);
    const body = CompletionSchema.parse(await res.json());
    // 400 characters = 100 tokens, plus BOS.
    expect(body.usage).toEqual({ prompt_tokens: 101, completion_tokens: 12, total_tokens: 113 });
    expect(body.choices[0]?.finish_reason).toBe("length");
    expect(body.choices[0]?.text.split(" ")).toHaveLength(12);
  });

  it("defaults completions to 16 tokens and stops early at the hinted length", async () => {
    const dflt = CompletionSchema.parse(await (await post(`${emu.url}/v1/completions`, { prompt: "hi" })).json());
    expect(dflt.usage.completion_tokens).toBe(16);
    const hinted = CompletionSchema.parse(await (await post(`${emu.url}/v1/completions`, { prompt: "hi", max_tokens: 50 }, sized(300, 9))).json());
    expect(hinted.usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 9 });
    expect(hinted.choices[0]?.finish_reason).toBe("stop");
  });

  it("gives the same text for the same request (seeded), and honours stop strings", async () => {
    const a = CompletionSchema.parse(await (await post(`${emu.url}/v1/completions`, { prompt: "same", max_tokens: 40 })).json());
    const b = CompletionSchema.parse(await (await post(`${emu.url}/v1/completions`, { prompt: "same", max_tokens: 40 })).json());
    expect(a.choices[0]?.text).toBe(b.choices[0]?.text);
    const words = (a.choices[0]?.text ?? "").split(" ");
    const stop = words[5] ?? "";
    const cut = CompletionSchema.parse(await (await post(`${emu.url}/v1/completions`, { prompt: "same", max_tokens: 40, stop: [stop] })).json());
    const first = words.indexOf(stop);
    expect(cut.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: stop, text: `${words.slice(0, first).join(" ")} ` });
    expect(cut.usage.completion_tokens).toBe(first + 1);
  });

  it("streams completion chunks, a usage chunk with no choices, then [DONE]", async () => {
    const res = await post(`${emu.url}/v1/completions`, { prompt: "p", max_tokens: 30, stream: true, stream_options: { include_usage: true } }, sized(500, 30));
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => z.looseObject({ object: z.literal("text_completion"), choices: z.array(z.looseObject({ text: z.string(), finish_reason: z.string().nullable() })) }).parse(JSON.parse(e)));
    const usage = z.object({ choices: z.tuple([]), usage: UsageSchema }).parse(JSON.parse(events.at(-2) ?? ""));
    expect(usage.usage).toEqual({ prompt_tokens: 500, completion_tokens: 30, total_tokens: 530 });
    const tokenChunks = chunks.slice(0, -1);
    expect(tokenChunks.at(-1)?.choices[0]?.finish_reason).toBe("length");
    expect(tokenChunks.slice(0, -1).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    expect(tokenChunks.map((c) => c.choices[0]?.text ?? "").join("").split(" ")).toHaveLength(30);
  });

  it("sends the stream's headers long before its end", async () => {
    // 1,500 decode steps of ~39 ms on an A100 = ~59 s emulated = ~290 ms of wall time at x200: long
    // enough that a busy machine's scheduling delay before the headers stays a small share of it.
    const t0 = performance.now();
    const res = await post(`${emu.url}/v1/completions`, { prompt: "p", max_tokens: 1500, stream: true, stream_options: { include_usage: true } }, sized(100, 1500));
    const headersMs = performance.now() - t0;
    await res.text();
    const totalMs = performance.now() - t0;
    expect(headersMs).toBeLessThan(totalMs * 0.25);
  });
});

describe("emulator: chat", () => {
  it("answers a chat call, counting the messages plus the template", async () => {
    const res = await post(`${emu.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: "system", content: "x".repeat(40) }, { role: "user", content: [{ type: "text", text: "y".repeat(80) }] }], max_tokens: 5 });
    const body = ChatSchema.parse(await res.json());
    // 1 BOS + 3 generation prompt + 2 x 4 per message + 10 + 20 tokens of text.
    expect(body.usage).toEqual({ prompt_tokens: 42, completion_tokens: 5, total_tokens: 47 });
    expect(body.choices[0]?.finish_reason).toBe("length");
  });

  it("streams a role chunk first, content deltas, the finish chunk, usage and [DONE]", async () => {
    const res = await post(`${emu.url}/v1/chat/completions`, { messages: [{ role: "user", content: "hi" }], max_tokens: 20, stream: true, stream_options: { include_usage: true } }, sized(200, 8));
    const events = await readSse(res);
    const Chunk = z.looseObject({ object: z.literal("chat.completion.chunk"), choices: z.array(z.looseObject({ delta: z.looseObject({ role: z.string().optional(), content: z.string().optional() }), finish_reason: z.string().nullable() })) });
    const chunks = events.slice(0, -2).map((e) => Chunk.parse(JSON.parse(e)));
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.slice(1).map((c) => c.choices[0]?.delta.content ?? "").join("").split(" ")).toHaveLength(8);
    expect(UsageSchema.parse(JSON.parse(events.at(-2) ?? "").usage)).toEqual({ prompt_tokens: 200, completion_tokens: 8, total_tokens: 208 });
    expect(events.at(-1)).toBe("[DONE]");
  });

  it("without stream_options sends no usage chunk", async () => {
    const events = await readSse(await post(`${emu.url}/v1/chat/completions`, { messages: [{ role: "user", content: "hi" }], max_tokens: 3, stream: true }));
    expect(events.some((e) => e.includes('"usage":{'))).toBe(false);
    expect(events.at(-1)).toBe("[DONE]");
  });
});

describe("emulator: errors", () => {
  async function error(res: Response): Promise<z.infer<typeof ErrorBodySchema>["error"] & { status: number }> {
    return { status: res.status, ...ErrorBodySchema.parse(await res.json()).error };
  }

  it("rejects a context overflow with 400 'maximum context length'", async () => {
    const e = await error(await post(`${emu.url}/v1/completions`, { prompt: "p", max_tokens: 1000 }, sized(32_000, 10)));
    expect(e).toMatchObject({ status: 400, code: 400, type: "BadRequestError" });
    expect(e.message).toContain("maximum context length");
    const alone = await error(await post(`${emu.url}/v1/chat/completions`, { messages: [{ role: "user", content: "p" }] }, sized(40_000, 10)));
    expect(alone.status).toBe(400);
    expect(alone.message).toContain("maximum context length");
  });

  it("rejects a prompt the KV cache can never hold, even within max_model_len", async () => {
    const small = await startEmulator({ gpu: "L40S", timeScale: 200, kvTokens: 4_096, maxModelLen: 8_192 });
    try {
      const e = await error(await post(`${small.url}/v1/completions`, { prompt: "p", max_tokens: 10 }, sized(5_000, 10)));
      expect(e.status).toBe(400);
      expect(e.message).toContain("maximum context length");
    } finally {
      await small.close();
    }
  });

  it("answers an unknown model with 404 and vLLM's message", async () => {
    const e = await error(await post(`${emu.url}/v1/completions`, { model: "gpt-4", prompt: "p" }));
    expect(e).toMatchObject({ status: 404, type: "NotFoundError", message: "The model `gpt-4` does not exist." });
  });

  it("rejects stream_options without stream, bad JSON and bad fields with 400", async () => {
    expect((await error(await post(`${emu.url}/v1/completions`, { prompt: "p", stream_options: { include_usage: true } }))).message).toMatch(/stream=True/);
    const bad = await fetch(`${emu.url}/v1/completions`, { method: "POST", body: "{nope" });
    expect(bad.status).toBe(400);
    expect((await error(await post(`${emu.url}/v1/completions`, { prompt: "p", max_tokens: 0 }))).status).toBe(400);
    expect((await error(await post(`${emu.url}/v1/chat/completions`, { messages: [] }))).status).toBe(400);
    expect((await error(await post(`${emu.url}/v1/completions`, { prompt: "p" }, { "x-hexflow-prompt-tokens": "many" }))).status).toBe(400);
  });
});
