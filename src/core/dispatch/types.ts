import type { Rng } from "../rng";
import type { InstanceInfo } from "../estimator";
import type { ReleasedCall } from "../workflow-run";

/** One instance as a dispatch policy sees it, for one call. */
export interface Candidate {
  info: InstanceInfo;
  /** Registration order: the authors' tie-break and reference instance. */
  order: number;
  /** L_m in estimated seconds (outstanding or cumulative, as the policy's load mode says). */
  load: number;
  /** t̂_m(c) on this instance. */
  estimate: number;
}

export interface DispatchInput {
  call: ReleasedCall;
  candidates: readonly Candidate[];
  /** t̄ of this call over the pool; the ε that keeps the WB ratio defined on an idle pool. */
  meanCallTime: number;
  alpha: number;
  rng: Rng;
  /** The pool clock, for plugins that judge a call's slack. */
  now: number;
}

/** A dispatch plugin: filters nothing (the coordinator passes healthy instances only), scores and picks. */
export interface DispatchPolicy {
  readonly name: string;
  /** Index into `candidates` of the chosen instance. */
  pick(input: DispatchInput): number;
}

/** Index of the best score; ties go to the lowest load, then to a seeded random choice. */
export function argmaxWithTieBreak(scores: readonly number[], input: DispatchInput, epsilon = 1e-12): number {
  let best: number[] = [];
  let bestScore = -Infinity;
  scores.forEach((s, i) => {
    if (s > bestScore + epsilon) {
      bestScore = s;
      best = [i];
    } else if (Math.abs(s - bestScore) <= epsilon) best.push(i);
  });
  if (best.length <= 1) return best[0] ?? 0;
  let minLoad = Infinity;
  for (const i of best) minLoad = Math.min(minLoad, input.candidates[i]?.load ?? Infinity);
  const lightest = best.filter((i) => (input.candidates[i]?.load ?? Infinity) <= minLoad + epsilon);
  return lightest[Math.floor(input.rng.next() * lightest.length)] ?? lightest[0] ?? 0;
}
