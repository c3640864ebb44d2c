/**
 * Turns a generation request into what the engine runs and what the client gets back: prompt
 * size, true output length, the output text and how it ends; or the error vLLM would answer with.
 *
 * The true output length is what a real model would generate before stopping. Replayed traces
 * state it in `x-hexflow-output-tokens` (capped by max_tokens); without it the call runs to
 * max_tokens, except a chat call without max_tokens, which stops (as if at EOS) after
 * DEFAULT_CHAT_OUTPUT tokens rather than filling the whole context as vLLM's limit would allow.
 */
import type { IncomingHttpHeaders } from "node:http";
import { TASK_MARKER } from "../core/text2sql/format";
import { badRequest, type ApiError } from "./errors";
import { ChatRequestSchema, CompletionRequestSchema, describeIssues, messageText, type CommonFields } from "./openai-shapes";
import { DEFAULT_SQL_ERROR_RATE, text2sqlPieces } from "./text2sql/answer";
import { applyStop, chatPromptTokens, completionPromptTokens, syntheticTokens } from "./text";

export type Endpoint = "completion" | "chat";

export interface GenerationPlan {
  endpoint: Endpoint;
  promptTokens: number;
  /** Exactly as many token texts as the engine generates. */
  pieces: string[];
  finishReason: "stop" | "length";
  stopReason: string | null;
  stream: boolean;
  includeUsage: boolean;
}

export interface PlanContext {
  servedModelName: string;
  maxModelLen: number;
  seed: number;
  /** Share of wrong Text-to-SQL candidates (half of it for revisions); default DEFAULT_SQL_ERROR_RATE. */
  sqlErrorRate?: number;
  /** Whether prompt + output tokens can ever be held in the KV cache. */
  fits(tokens: number): boolean;
}

export type PlanResult = { ok: true; plan: GenerationPlan } | { ok: false; error: ApiError };

const DEFAULT_COMPLETION_MAX_TOKENS = 16;
export const DEFAULT_CHAT_OUTPUT = 256;
export const PROMPT_TOKENS_HEADER = "x-hexflow-prompt-tokens";
export const OUTPUT_TOKENS_HEADER = "x-hexflow-output-tokens";

const fail = (error: ApiError): PlanResult => ({ ok: false, error });

function headerInt(headers: IncomingHttpHeaders, name: string): number | undefined | ApiError {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  if (!Number.isInteger(n) || n < 1) return badRequest(`${name} must be a positive integer (got "${String(raw)}")`);
  return n;
}

interface Parsed {
  model: string | null | undefined;
  n: number | null | undefined;
  stream: boolean;
  streamOptions: { include_usage?: boolean | null | undefined } | null | undefined;
  /** undefined: absent (the endpoint's default applies); null: explicitly "as many as fit". */
  maxTokens: number | null | undefined;
  stop: string[];
  includeStop: boolean;
  ignoreEos: boolean;
  estimatedPromptTokens: number;
  /** What the output text is derived from, so equal requests get equal text. */
  key: string;
  /** The prompt text a Text-to-SQL workflow answer is derived from (a chat's message holding the task marker). */
  text: string | undefined;
}

function parse(endpoint: Endpoint, body: unknown): Parsed | ApiError {
  if (endpoint === "completion") {
    const r = CompletionRequestSchema.safeParse(body);
    if (!r.success) return badRequest(describeIssues(r.error));
    const p = r.data.prompt;
    const single = typeof p === "string" || p.length === 0 || typeof p[0] === "number" ? p : p.length === 1 ? p[0] : undefined;
    if (single === undefined) return badRequest("The emulator serves one prompt per request; send a batch as separate requests.");
    if (typeof single !== "string" && single.length === 0) return badRequest("The prompt is empty.");
    const estimated = typeof single === "string" ? completionPromptTokens(single) : single.length;
    return {
      ...common(r.data),
      maxTokens: r.data.max_tokens,
      estimatedPromptTokens: estimated,
      key: typeof single === "string" ? single : single.join(","),
      text: typeof single === "string" ? single : undefined,
    };
  }
  const r = ChatRequestSchema.safeParse(body);
  if (!r.success) return badRequest(describeIssues(r.error));
  const texts = r.data.messages.map(messageText);
  return {
    ...common(r.data),
    maxTokens: r.data.max_completion_tokens ?? r.data.max_tokens,
    estimatedPromptTokens: chatPromptTokens(texts),
    key: r.data.messages.map((m, i) => `${m.role}:${texts[i] ?? ""}`).join("\n"),
    text: texts.find((t) => t.startsWith(TASK_MARKER)),
  };
}

function common(d: CommonFields): Omit<Parsed, "maxTokens" | "estimatedPromptTokens" | "key" | "text"> {
  return {
    model: d.model,
    n: d.n,
    stream: d.stream === true,
    streamOptions: d.stream_options,
    stop: d.stop === undefined || d.stop === null ? [] : typeof d.stop === "string" ? [d.stop] : d.stop,
    includeStop: d.include_stop_str_in_output === true,
    ignoreEos: d.ignore_eos === true,
  };
}

export function planRequest(endpoint: Endpoint, body: unknown, headers: IncomingHttpHeaders, ctx: PlanContext): PlanResult {
  const p = parse(endpoint, body);
  if ("status" in p) return fail(p);
  if (p.streamOptions !== undefined && p.streamOptions !== null && !p.stream) {
    return fail(badRequest("Stream options can only be defined when `stream=True`."));
  }
  if (p.model !== undefined && p.model !== null && p.model !== ctx.servedModelName) {
    return fail({ status: 404, message: `The model \`${p.model}\` does not exist.` });
  }
  if (p.n !== undefined && p.n !== null && p.n > 1) return fail(badRequest("The emulator supports n = 1 only."));
  const promptHint = headerInt(headers, PROMPT_TOKENS_HEADER);
  if (typeof promptHint === "object") return fail(promptHint);
  const outputHint = headerInt(headers, OUTPUT_TOKENS_HEADER);
  if (typeof outputHint === "object") return fail(outputHint);

  const promptTokens = promptHint ?? p.estimatedPromptTokens;
  const limit = ctx.maxModelLen;
  const noun = endpoint === "chat" ? "messages" : "prompt";
  if (promptTokens >= limit) {
    return fail(
      badRequest(
        `This model's maximum context length is ${limit} tokens. However, you requested ${promptTokens} tokens in the ${noun}. ` +
          `Please reduce the length of the ${noun}.`,
      ),
    );
  }
  const explicitMax = p.maxTokens !== undefined && p.maxTokens !== null;
  const maxTokens = p.maxTokens ?? (p.maxTokens === undefined && endpoint === "completion" ? DEFAULT_COMPLETION_MAX_TOKENS : limit - promptTokens);
  if (promptTokens + maxTokens > limit) {
    return fail(
      badRequest(
        `This model's maximum context length is ${limit} tokens. However, you requested ${promptTokens + maxTokens} tokens ` +
          `(${promptTokens} in the ${noun}, ${maxTokens} in the completion). Please reduce the length of the ${noun} or completion.`,
      ),
    );
  }
  // A Text-to-SQL workflow prompt gets its answer after reasoning of its step's traced length (see text2sqlPieces).
  const answerTokens = p.text === undefined ? undefined : text2sqlPieces(p.text, ctx.seed, ctx.sqlErrorRate ?? DEFAULT_SQL_ERROR_RATE, maxTokens);
  const natural = answerTokens?.length ?? outputHint ?? (explicitMax || p.ignoreEos || endpoint === "completion" ? maxTokens : DEFAULT_CHAT_OUTPUT);
  const outputTokens = Math.min(natural, maxTokens);
  if (!ctx.fits(promptTokens + outputTokens)) {
    return fail(
      badRequest(
        `This model's maximum context length is ${limit} tokens, but this server's KV cache cannot hold ` +
          `${promptTokens + outputTokens} tokens (${promptTokens} in the ${noun}) at once. Please reduce the length of the ${noun} or completion.`,
      ),
    );
  }
  let pieces = answerTokens?.slice(0, outputTokens) ?? syntheticTokens(ctx.seed, p.key, outputTokens);
  let finishReason: "stop" | "length" = outputTokens < maxTokens ? "stop" : "length";
  let stopReason: string | null = null;
  const match = applyStop(pieces, p.stop, p.includeStop);
  if (match !== undefined) {
    pieces = match.pieces;
    finishReason = "stop";
    stopReason = match.stop;
  }
  const includeUsage = p.stream && p.streamOptions !== undefined && p.streamOptions !== null && p.streamOptions.include_usage !== false;
  return { ok: true, plan: { endpoint, promptTokens, pieces, finishReason, stopReason, stream: p.stream, includeUsage } };
}
