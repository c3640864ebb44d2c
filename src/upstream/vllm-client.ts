/**
 * The one seam between hexflow and a vLLM server: a streamed OpenAI-compatible completion.
 * Streaming matters in production: a Worker may have only six connections waiting for response
 * headers, and a streamed response sends its headers at once (DESIGN section 3). `fetcher` is the
 * instance's transport (transport.ts): the global fetch, a Workers VPC service binding's, or one with Access headers.
 */
import { z } from "zod";
import type { ChatMessage, Sampling } from "../core/workflow";
import type { ReleasedCall } from "../core/workflow-run";

const CONNECT_ATTEMPTS = 2;

export type Fetcher = (input: string, init: RequestInit) => Promise<Response>;

export interface UpstreamCall {
  baseUrl: string;
  model: string;
  callId: string;
  promptTokens: number;
  /** The real prompt; absent for a replayed call, which sends synthetic text of promptTokens. */
  prompt?: string;
  /** A chat call: sent to /v1/chat/completions instead of a prompt. */
  messages?: ChatMessage[];
  sampling?: Sampling;
  maxTokens: number;
  /** Replay hint: the output length the trace recorded (the emulator honours it). */
  outputTokensHint?: number;
  timeoutMs: number;
  /** Each piece of text as it streams in (live streaming to the caller); the result still carries all of it. */
  onText?: (delta: string) => void;
}

export type UpstreamResult =
  | { ok: true; promptTokens: number; completionTokens: number; finishReason: string; text: string }
  | { ok: false; error: { code: "upstream_unreachable" | "upstream_error" | "upstream_timeout" | "upstream_bad_response"; status?: number; message: string } };

const ChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullable().optional(),
        text: z.string().optional(),
        delta: z.object({ content: z.string().nullable().optional() }).optional(),
      }),
    )
    .default([]),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullable().optional(),
});
const ErrorBodySchema = z.union([
  z.object({ error: z.object({ message: z.string() }) }),
  z.object({ message: z.string() }),
]);

/**
 * What vLLM is asked for one released call. A replayed call (no prompt, no messages) sends synthetic
 * text with the trace's lengths as hints, and room for at least the expected output; a real call its
 * own text, limit and sampling.
 */
export function upstreamRequest(call: ReleasedCall): Omit<UpstreamCall, "baseUrl" | "model" | "timeoutMs" | "onText"> {
  const base = { callId: call.id, promptTokens: call.inputTokens };
  if (call.prompt === undefined && call.messages === undefined) {
    return { ...base, maxTokens: Math.max(call.outputTokens, Math.ceil(call.expectedOutputTokens)), outputTokensHint: call.outputTokens };
  }
  return {
    ...base,
    ...(call.prompt === undefined ? {} : { prompt: call.prompt }),
    ...(call.messages === undefined ? {} : { messages: call.messages }),
    ...(call.sampling === undefined ? {} : { sampling: call.sampling }),
    maxTokens: call.maxTokens ?? call.outputTokens,
  };
}

/** Synthetic prompt text of about `tokens` tokens (four characters each) for replayed calls. */
export function syntheticPrompt(tokens: number): string {
  return "tok ".repeat(Math.max(1, tokens));
}

/** vLLM's (OpenAI's) names for the sampling fields; unset ones are left out so the server's defaults hold. */
function samplingFields(s: Sampling | undefined): Record<string, unknown> {
  if (s === undefined) return {};
  const fields: Record<string, unknown> = { temperature: s.temperature, top_p: s.topP, stop: s.stop, seed: s.seed, presence_penalty: s.presencePenalty, frequency_penalty: s.frequencyPenalty };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

export async function streamCompletion(fetcher: Fetcher, c: UpstreamCall): Promise<UpstreamResult> {
  const headers: Record<string, string> = { "content-type": "application/json", "x-hexflow-call-id": c.callId };
  if (c.prompt === undefined && c.messages === undefined) headers["x-hexflow-prompt-tokens"] = String(c.promptTokens);
  if (c.outputTokensHint !== undefined) headers["x-hexflow-output-tokens"] = String(c.outputTokensHint);
  const body = JSON.stringify({
    model: c.model,
    ...(c.messages === undefined ? { prompt: c.prompt ?? syntheticPrompt(c.promptTokens) } : { messages: c.messages }),
    max_tokens: c.maxTokens,
    ...samplingFields(c.sampling),
    stream: true,
    stream_options: { include_usage: true },
  });
  const url = `${c.baseUrl.replace(/\/$/, "")}/v1/${c.messages === undefined ? "completions" : "chat/completions"}`;
  const signal = AbortSignal.timeout(c.timeoutMs);
  let res: Response | undefined;
  // One retry when the connection fails before any response: a pooled keep-alive socket that the
  // server closed just as it was reused (uvicorn and Node close idle ones after 5 s) fails this way.
  // Safe to repeat: vLLM never saw the request, or aborts it when its client goes away.
  for (let attempt = 1; res === undefined; attempt++) {
    try {
      res = await fetcher(url, { method: "POST", headers, body, signal });
    } catch (e) {
      const timeout = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      if (timeout || attempt >= CONNECT_ATTEMPTS) {
        return { ok: false, error: { code: timeout ? "upstream_timeout" : "upstream_unreachable", message: e instanceof Error ? e.message : String(e) } };
      }
    }
  }
  if (!res.ok) {
    const text = await res.text().catch(() => "");
    let message = text.slice(0, 300);
    try {
      const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
      if (parsed.success) message = "error" in parsed.data ? parsed.data.error.message : parsed.data.message;
    } catch {
      // not JSON: keep the raw text
    }
    return { ok: false, error: { code: "upstream_error", status: res.status, message } };
  }
  try {
    return await readStream(res, c.onText);
  } catch (e) {
    const timeout = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    return { ok: false, error: { code: timeout ? "upstream_timeout" : "upstream_unreachable", message: `stream broke: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

async function readStream(res: Response, onText: ((delta: string) => void) | undefined): Promise<UpstreamResult> {
  if (res.body === null) return { ok: false, error: { code: "upstream_bad_response", message: "empty body" } };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  let finishReason = "unknown";
  let text = "";
  let done = false;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buffer += value;
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") {
          done = true;
          continue;
        }
        const chunk = ChunkSchema.safeParse(JSON.parse(data));
        if (!chunk.success) return { ok: false, error: { code: "upstream_bad_response", message: "malformed stream chunk" } };
        if (chunk.data.usage) usage = chunk.data.usage;
        for (const ch of chunk.data.choices) {
          if (ch.finish_reason) finishReason = ch.finish_reason;
          const piece = ch.text ?? ch.delta?.content ?? "";
          if (piece.length === 0) continue;
          text += piece;
          onText?.(piece);
        }
      }
    }
  }
  if (!done || usage === undefined) {
    return { ok: false, error: { code: "upstream_unreachable", message: done ? "stream ended without usage" : "stream ended before [DONE]" } };
  }
  return { ok: true, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, finishReason, text };
}
