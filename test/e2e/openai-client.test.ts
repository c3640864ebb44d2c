import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../../scripts/lib/stack";
import { tenantHeaders } from "../../scripts/lib/replay";

/** Emulated A100, 10x real time: a 64-token answer takes ~170 ms and streams in several chunks. */
const TIME_SCALE = 10;
const MODEL = "llama-3.1-70b";
let stack: Stack;
let client: OpenAI;

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "system", content: "You answer questions about the bicycle shop's database with SQL." },
  { role: "user", content: "How many bikes did we sell last month?" },
];

/** Milliseconds to the first content chunk and the whole stream, through `c`. */
async function timeStream(c: OpenAI): Promise<{ ttftMs: number; totalMs: number; chunks: number }> {
  const t0 = performance.now();
  let ttftMs = Number.NaN;
  let chunks = 0;
  const stream = await c.chat.completions.create({ model: MODEL, messages, max_tokens: 64, stream: true });
  for await (const ch of stream) {
    if ((ch.choices[0]?.delta.content ?? "").length === 0) continue;
    chunks += 1;
    if (Number.isNaN(ttftMs)) ttftMs = performance.now() - t0;
  }
  return { ttftMs, totalMs: performance.now() - t0, chunks };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

beforeAll(async () => {
  stack = await startStack({ fleet: ["A100"], timeScale: TIME_SCALE, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-openai-")), quiet: process.env.HEXFLOW_E2E_LOGS === undefined });
  client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: stack.apiKey, maxRetries: 0 });
}, 120_000);

afterAll(async () => stack?.stop());

describe("the official openai client against hexflow's OpenAI-compatible endpoint (wrangler dev + emulated vLLM)", () => {
  it("chat.completions.create, not streamed: an answer with usage, scheduled as a workflow", async () => {
    const { data: r, response } = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 24, temperature: 0.3 }).withResponse();
    expect(r.object).toBe("chat.completion");
    expect(r.choices[0]?.message.role).toBe("assistant");
    expect(r.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(r.choices[0]?.finish_reason).toBe("length");
    expect(r.usage?.completion_tokens).toBe(24);
    const id = response.headers.get("x-hexflow-workflow-id");
    expect(r.id).toBe(`chatcmpl-${id}`);
    const wf = (await (await fetch(`${stack.url}/v1/workflows/${id}`, { headers: tenantHeaders(stack) })).json()) as { status: string; stages: { step: string; calls: { instance: string }[] }[] };
    expect(wf.status).toBe("succeeded");
    expect(wf.stages[0]?.calls[0]?.instance).toBe(stack.emulators[0]?.id);
  });

  it("chat.completions.create, streamed: chunks assemble into the text, with finish_reason and usage", async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 64, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    let contentChunks = 0;
    for await (const ch of stream) {
      const c = ch.choices[0];
      if (c?.delta.content) {
        text += c.delta.content;
        contentChunks += 1;
      }
      if (c?.finish_reason) finish = c.finish_reason;
      if (ch.usage) usage = ch.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(contentChunks).toBeGreaterThan(1);
    expect(finish).toBe("length");
    expect(usage?.completion_tokens).toBe(64);
  });

  it("completions.create: a text completion", async () => {
    const r = await client.completions.create({ model: MODEL, prompt: "-- the ten best-selling bikes\nSELECT", max_tokens: 8 });
    expect(r.object).toBe("text_completion");
    expect(r.choices[0]?.text.length).toBeGreaterThan(0);
    expect(r.usage?.completion_tokens).toBe(8);
  });

  it("a bad X-SLO-Ms makes the client throw an APIError with status 400 and the endpoint's message", async () => {
    const bad = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: stack.apiKey, maxRetries: 0, defaultHeaders: { "X-SLO-Ms": "soon" } });
    const e = await bad.chat.completions.create({ model: MODEL, messages, max_tokens: 4 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIError);
    expect((e as APIError).status).toBe(400);
    expect((e as APIError).code).toBe("invalid_request");
    expect((e as APIError).message).toContain("X-SLO-Ms");
    // A good one is accepted and sets the workflow's SLO.
    const good = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: stack.apiKey, maxRetries: 0, defaultHeaders: { "X-SLO-Ms": "60000" } });
    const { response } = await good.chat.completions.create({ model: MODEL, messages, max_tokens: 4 }).withResponse();
    const wf = (await (await fetch(`${stack.url}/v1/workflows/${response.headers.get("x-hexflow-workflow-id")}`, { headers: tenantHeaders(stack) })).json()) as { sloMs: number };
    expect(wf.sloMs).toBe(60000);
  });

  it("time to first token through the gateway vs straight from the emulator (reported, loosely bounded)", async () => {
    const direct = new OpenAI({ baseURL: `${stack.emulators[0]?.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const via: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < 5; i++) {
      raw.push((await timeStream(direct)).ttftMs);
      via.push((await timeStream(client)).ttftMs);
    }
    console.log(`TTFT median over 5 (ms, real): gateway ${median(via).toFixed(1)}, emulator direct ${median(raw).toFixed(1)}, added ${(median(via) - median(raw)).toFixed(1)}`);
    expect(median(via)).toBeLessThan(median(raw) + 1_000);
  });
});
