/**
 * The OpenAI-compatible request bodies (`/v1/chat/completions`, `/v1/completions`) and their
 * translation into a one-call workflow. What vLLM would ignore we ignore too (unknown fields are
 * dropped); what would silently change the answer's meaning if ignored (tools, n > 1, logprobs,
 * response formats, echo, suffix) is rejected with a 400.
 */
import { prettifyError, z } from "zod";
import { estimateTokens } from "../core/dag-workflow";
import { LIMITS } from "../core/limits";
import { baseSloSeconds } from "../core/slo";
import type { InstanceInfo } from "../core/estimator";
import type { ChatMessage, Sampling, WorkflowSpec } from "../core/workflow";
import { RequestPoolSchema } from "./schemas";

/** Defaults and model constants; the limits themselves are LIMITS.openai (src/core/limits.ts). */
export const OPENAI_DEFAULTS = {
  /** Used when the request names no max_tokens: OpenAI's 16 for completions; a moderate answer for chat. */
  defaultMaxTokens: { chat: 512, completion: 16 },
  /** The chat template's tokens per message (Llama-3: header start, role, header end, end of turn). */
  templateTokensPerMessage: 4,
} as const;

const L = LIMITS.openai;

export type Endpoint = "chat" | "completion";

const TextPartSchema = z.object({ type: z.literal("text"), text: z.string() });
const MessageSchema = z.object({
  // "developer" is OpenAI's newer name for "system"; vLLM's chat templates know only the older one.
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(TextPartSchema).min(1)]),
});

const positive = (max: number) => z.number().int().positive().max(max).nullish();
const CommonSchema = z.object({
  model: z.string().min(1).nullish(),
  max_tokens: positive(L.maxTokensCap),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  n: z.number().int().min(1).max(1, "n > 1 is not supported: one request is one scheduled call").nullish(),
});
export const ChatRequestSchema = CommonSchema.extend({
  messages: z.array(MessageSchema).min(1).max(L.maxMessages),
  max_completion_tokens: positive(L.maxTokensCap),
});
export const CompletionRequestSchema = CommonSchema.extend({
  prompt: z.union([z.string(), z.array(z.string()).length(1, "one prompt per request (token-id prompts are not supported)")]),
});

const UNSUPPORTED: Record<Endpoint, readonly string[]> = {
  chat: ["tools", "tool_choice", "functions", "function_call", "response_format", "logprobs", "top_logprobs", "logit_bias", "audio", "modalities", "prediction"],
  completion: ["echo", "suffix", "best_of", "logprobs", "logit_bias", "response_format"],
};

export interface OpenAIRequest {
  endpoint: Endpoint;
  model: string | undefined;
  prompt?: string;
  messages?: ChatMessage[];
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  sampling?: Sampling;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string; param: string | null };

const bad = (message: string, param: string | null = null): { ok: false; message: string; param: string | null } => ({ ok: false, message, param });

function firstParam(error: z.ZodError): string | null {
  const p = error.issues[0]?.path[0];
  return typeof p === "string" ? p : null;
}

export function parseOpenAIRequest(endpoint: Endpoint, body: unknown): Parsed<OpenAIRequest> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return bad("the body must be a JSON object");
  for (const key of UNSUPPORTED[endpoint]) {
    const v = (body as Record<string, unknown>)[key];
    if (v !== undefined && v !== null && v !== false) return bad(`\`${key}\` is not supported by hexflow's endpoint`, key);
  }
  const r = endpoint === "chat" ? ChatRequestSchema.safeParse(body) : CompletionRequestSchema.safeParse(body);
  if (!r.success) return bad(prettifyError(r.error), firstParam(r.error));
  const d = r.data;
  if (d.stream_options != null && d.stream !== true) return bad("stream_options can only be set when stream is true", "stream_options");
  const stop = d.stop == null ? undefined : typeof d.stop === "string" ? [d.stop] : d.stop;
  const fields = { temperature: d.temperature, topP: d.top_p, stop, seed: d.seed, presencePenalty: d.presence_penalty, frequencyPenalty: d.frequency_penalty };
  const sampling = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as Sampling;
  const common = {
    endpoint,
    model: d.model ?? undefined,
    stream: d.stream === true,
    includeUsage: d.stream_options?.include_usage === true,
    ...(Object.keys(sampling).length > 0 ? { sampling } : {}),
  };
  if ("messages" in d) {
    const messages = d.messages.map((m): ChatMessage => ({
      role: m.role === "developer" ? "system" : m.role,
      content: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join("\n"),
    }));
    if (messages.reduce((n, m) => n + m.content.length, 0) > L.maxPromptChars) return bad(`the messages exceed ${L.maxPromptChars} characters`, "messages");
    return { ok: true, value: { ...common, messages, maxTokens: d.max_completion_tokens ?? d.max_tokens ?? OPENAI_DEFAULTS.defaultMaxTokens.chat } };
  }
  const prompt = typeof d.prompt === "string" ? d.prompt : (d.prompt[0] ?? "");
  if (prompt.length > L.maxPromptChars) return bad(`the prompt exceeds ${L.maxPromptChars} characters`, "prompt");
  return { ok: true, value: { ...common, prompt, maxTokens: d.max_tokens ?? OPENAI_DEFAULTS.defaultMaxTokens.completion } };
}

/** `X-SLO-Ms`: a positive integer of pool-clock milliseconds; absent means the default. */
export function parseSloHeader(raw: string | undefined): Parsed<number | undefined> {
  if (raw === undefined) return { ok: true, value: undefined };
  const n = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > L.maxSloMs) return bad(`X-SLO-Ms must be an integer from 1 to ${L.maxSloMs} (got "${raw}")`, "X-SLO-Ms");
  return { ok: true, value: n };
}

/** `X-Hexflow-Pool`: absent lets POOL_ROUTES pick the pool from the model. */
export function parsePoolHeader(raw: string | undefined): Parsed<string | undefined> {
  const r = RequestPoolSchema.safeParse(raw);
  return r.success ? { ok: true, value: r.data } : bad(`X-Hexflow-Pool: ${prettifyError(r.error)}`, "X-Hexflow-Pool");
}

export function inputTokens(req: OpenAIRequest): number {
  if (req.messages === undefined) return estimateTokens(req.prompt ?? "");
  return req.messages.reduce((n, m) => n + estimateTokens(m.content) + OPENAI_DEFAULTS.templateTokensPerMessage, 0);
}

/**
 * One stage with one call. The scheduler expects the whole max_tokens (the real length is unknown
 * until the model stops), so its estimate and KV claim are upper bounds.
 */
export function oneCallSpec(req: OpenAIRequest): WorkflowSpec {
  const step = req.endpoint;
  const call = {
    step,
    inputTokens: inputTokens(req),
    outputTokens: req.maxTokens,
    expectedOutputTokens: req.maxTokens,
    maxTokens: req.maxTokens,
    ...(req.prompt === undefined ? {} : { prompt: req.prompt }),
    ...(req.messages === undefined ? {} : { messages: req.messages }),
    ...(req.sampling === undefined ? {} : { sampling: req.sampling }),
  };
  return { kind: step, stages: [{ step, calls: [call] }], template: [step] };
}

/**
 * The base SLO of a one-call workflow, which its tenant's SLO scales multiply: the call's no-queueing time
 * on the pool's average GPU (DESIGN section 5's definition applied to a one-stage template), not the CHESS
 * workflow's, which would make a single call far less urgent than it is.
 */
export function callBaseSloSeconds(req: OpenAIRequest, instances: readonly InstanceInfo[]): number {
  const step = req.endpoint;
  return baseSloSeconds(instances, [step], { [step]: { inputTokens: inputTokens(req), outputTokens: req.maxTokens } });
}
