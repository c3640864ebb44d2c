/**
 * Which sequences produced a token in a step. The engine's public interface reports only the calls
 * it admitted and the calls it finished, which fixes every call's start and end exactly but not when
 * its intermediate tokens appear; streaming needs those. This tracker follows the rule the engine
 * documents (VLLM_API section 5): each step, every sequence past its prefill decodes one token, then
 * prefill chunks fill the remaining token budget in admission order, and a sequence whose prefill
 * completes emits its first token. Without preemption it matches the engine step for step. A
 * preempted sequence keeps getting tokens here while the engine recomputes it; since a sequence's
 * last token is only released when the engine finishes it, counts and end times stay exact and only
 * the spacing of that sequence's tokens is off.
 *
 * Once the engine can report per-step progress itself (see the emulator's notes in the report),
 * this file goes away.
 */

interface Tracked {
  id: string;
  prompt: number;
  prefillLeft: number;
  generated: number;
  output: number;
}

export interface Survivor {
  id: string;
  /** Prompt plus what was already generated: what a fresh engine must prefill again. */
  contextTokens: number;
  remainingTokens: number;
}

export class TokenTracker {
  /** In admission order, as the engine keeps its running list. */
  private seqs: Tracked[] = [];

  constructor(private readonly maxBatchedTokens: number) {}

  admit(id: string, promptTokens: number, outputTokens: number): void {
    this.seqs.push({ id, prompt: promptTokens, prefillLeft: promptTokens, generated: 0, output: Math.max(1, outputTokens) });
  }

  /**
   * Advances one engine step; returns the tokens each sequence produced in it. `finished` (from the
   * engine) get all their remaining tokens, the others at most up to their last token but one.
   */
  advance(finished: ReadonlySet<string>): Map<string, number> {
    const produced = new Map<string, number>();
    let budget = this.maxBatchedTokens;
    const decoding = new Set<Tracked>();
    for (const s of this.seqs) {
      if (s.prefillLeft === 0) {
        decoding.add(s);
        budget -= 1;
      }
    }
    for (const s of this.seqs) {
      let tokens = decoding.has(s) ? 1 : 0;
      if (!decoding.has(s) && budget > 0) {
        const chunk = Math.min(s.prefillLeft, budget);
        budget -= chunk;
        s.prefillLeft -= chunk;
        if (s.prefillLeft === 0) tokens = 1;
      }
      if (finished.has(s.id)) {
        tokens = s.output - s.generated;
      } else {
        tokens = Math.min(tokens, s.output - 1 - s.generated);
      }
      if (tokens > 0) {
        s.generated += tokens;
        produced.set(s.id, tokens);
      }
    }
    if (finished.size > 0) this.seqs = this.seqs.filter((s) => !finished.has(s.id));
    return produced;
  }

  remove(id: string): void {
    this.seqs = this.seqs.filter((s) => s.id !== id);
  }

  /** The tracked sequences, to carry over into a fresh engine; the tracker is emptied. */
  drain(): Survivor[] {
    const out = this.seqs.map((s) => ({ id: s.id, contextTokens: s.prompt + s.generated, remainingTokens: s.output - s.generated }));
    this.seqs = [];
    return out;
  }
}
