/**
 * Token counts without a tokenizer, and the synthetic output text.
 *
 * Counting rule (documented in the README): a text is ceil(characters / 4) tokens, the usual
 * English average for Llama-3's tokenizer; a completion prompt adds 1 (BOS); a token-id prompt is
 * its length. A chat adds Llama-3's template: 1 BOS, 4 per message (header start, role, header end,
 * end of turn) and 3 for the assistant header of the generation prompt. Callers that know the real
 * count (replayed traces) send it in `x-hexflow-prompt-tokens` instead.
 *
 * Output: one word per token from a small SQL-flavoured vocabulary, drawn from a generator seeded
 * by the emulator's seed and the prompt, so the same request always gets the same text.
 */
import { createRng, uniformInt } from "../core/rng";

export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function completionPromptTokens(text: string): number {
  return 1 + textTokens(text);
}

const CHAT_BOS = 1;
const CHAT_PER_MESSAGE = 4;
const CHAT_GENERATION_PROMPT = 3;

export function chatPromptTokens(contents: readonly string[]): number {
  let n = CHAT_BOS + CHAT_GENERATION_PROMPT;
  for (const c of contents) n += CHAT_PER_MESSAGE + textTokens(c);
  return n;
}

const VOCABULARY = [
  "SELECT", "name", "FROM", "users", "WHERE", "id", "=", "AND", "COUNT(*)", "GROUP", "BY", "ORDER", "LIMIT", "JOIN",
  "ON", "orders", "total", "DESC", "the", "schema", "column", "value", "table", "result",
] as const;

/** FNV-1a: a stable 32-bit hash to seed each request's text. */
function hash32(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Exactly `count` token texts; every token but the first starts with a space. */
export function syntheticTokens(seed: number, key: string, count: number): string[] {
  const rng = createRng(hash32(seed, key));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const word = VOCABULARY[uniformInt(rng, VOCABULARY.length)] ?? "the";
    out.push(i === 0 ? word : ` ${word}`);
  }
  return out;
}

export interface StopMatch {
  /** Tokens generated up to and including the one that completed the stop string. */
  tokens: number;
  /** The token texts, cut so that their concatenation ends before (or after) the stop string. */
  pieces: string[];
  stop: string;
}

/**
 * vLLM checks stop strings after each token and stops at the first token that completes one; the
 * text is cut before the stop string unless `include_stop_str_in_output`.
 */
export function applyStop(pieces: readonly string[], stops: readonly string[], includeStop: boolean): StopMatch | undefined {
  const usable = stops.filter((s) => s.length > 0);
  if (usable.length === 0) return undefined;
  let text = "";
  for (let i = 0; i < pieces.length; i++) {
    const before = text.length;
    text += pieces[i] ?? "";
    let best: { at: number; stop: string } | undefined;
    for (const stop of usable) {
      // Only matches that end in the new token: earlier ones would have stopped earlier.
      const at = text.indexOf(stop, Math.max(0, before - stop.length + 1));
      if (at >= 0 && (best === undefined || at < best.at)) best = { at, stop };
    }
    if (best !== undefined) {
      const end = includeStop ? best.at + best.stop.length : best.at;
      return { tokens: i + 1, pieces: cutPieces(pieces.slice(0, i + 1), end), stop: best.stop };
    }
  }
  return undefined;
}

function cutPieces(pieces: readonly string[], length: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const p of pieces) {
    const keep = Math.max(0, Math.min(p.length, length - used));
    out.push(p.slice(0, keep));
    used += keep;
  }
  return out;
}
