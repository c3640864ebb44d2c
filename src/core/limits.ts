/**
 * Every bound the public API enforces, in one place: request body size, question length, DAG size and
 * fan-out, max_tokens caps and row caps. Schemas and checks read their numbers from here, so a limit is
 * changed once and the OpenAPI document (generated from those schemas) and the README follow.
 *
 * Pure data: the simulator and the Durable Objects share it with the gateway.
 */

type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object ? DeepReadonly<T[K]> : T[K] };

function deepFreeze<T extends object>(value: T): DeepReadonly<T> {
  for (const v of Object.values(value)) if (typeof v === "object" && v !== null) deepFreeze(v);
  return Object.freeze(value);
}

/** The end-to-end SLO any request may ask for (pool-clock milliseconds): one day. */
const MAX_SLO_MS = 86_400_000;

export const LIMITS = deepFreeze({
  http: {
    /**
     * Any request body. The largest valid bodies are a DAG at its limits (32 prompts and 16 inputs of
     * 32,000 characters, about 1.5 MB) and an OpenAI prompt of 1,000,000 characters; 4 MiB admits both
     * with room for JSON escaping, and bounds what the gateway buffers per request.
     */
    maxBodyBytes: 4 * 1024 * 1024,
    /**
     * Nesting of a JSON body. No valid body nests deeper than 6; a hostile one thousands deep would
     * otherwise reach a Durable Object RPC, whose serialisation refuses it with an exception.
     */
    maxJsonDepth: 32,
  },
  /** Shared by every kind of workflow. */
  workflow: {
    maxSloMs: MAX_SLO_MS,
    /** `sloScale`: a multiple of the pool's base SLO (the tenant's class narrows it further). */
    maxSloScale: 100,
  },
  /** `kind: "replay"`: the reference trace format as a request. */
  replay: {
    maxCalls: 500,
    maxStepChars: 64,
    maxInputTokens: 1_000_000,
    maxOutputTokens: 100_000,
  },
  /** `kind: "dag"` (src/core/dag.ts). */
  dag: {
    maxStages: 32,
    maxFanOut: 16,
    /** Σ fanOut over all stages. */
    maxTotalCalls: 64,
    maxPromptChars: 32_000,
    /** A stage's `maxTokens`. */
    maxOutputTokens: 8192,
    maxInputs: 16,
    maxInputChars: 32_000,
    maxModelChars: 128,
  },
  /** `kind: "text2sql"`: a question is a sentence or a paragraph, never a document. */
  text2sql: {
    maxQuestionChars: 4_000,
    maxDatabaseNameChars: 63,
    candidates: { min: 1, max: 8 },
    maxRounds: { min: 0, max: 10 },
    tests: { min: 1, max: 10 },
    /** Rows the answer carries at most. */
    maxRows: { min: 1, max: 1000 },
  },
  /** `POST /v1/chat/completions` and `/v1/completions`. */
  openai: {
    /** max_tokens / max_completion_tokens: the scheduler prices and reserves KV for all of it. */
    maxTokensCap: 8192,
    maxMessages: 512,
    maxPromptChars: 1_000_000,
    /** `X-SLO-Ms`: the same cap as a workflow's sloMs. */
    maxSloMs: MAX_SLO_MS,
  },
  /** `Idempotency-Key` on `POST /v1/workflows`: room for a UUID or a client's own composite key, not a document. */
  idempotency: {
    maxKeyChars: 255,
  },
  /** `POST /v1/databases`: what one registration stores and every Text-to-SQL prompt over it carries. */
  databases: {
    maxTables: 500,
    maxSchemaBytes: 256 * 1024,
  },
});

export type Limits = typeof LIMITS;

/** How deeply a parsed JSON value nests (a scalar is 0), counting no further than `cap + 1`. */
export function jsonDepth(value: unknown, cap: number = LIMITS.http.maxJsonDepth): number {
  if (typeof value !== "object" || value === null) return 0;
  if (cap < 0) return 1;
  let deepest = 0;
  for (const v of Object.values(value)) {
    deepest = Math.max(deepest, jsonDepth(v, cap - 1));
    if (deepest > cap) break;
  }
  return deepest + 1;
}
