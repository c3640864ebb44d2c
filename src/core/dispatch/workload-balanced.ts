/**
 * wb: HexGen-Flow's workload-balanced dispatch, score_m = α·t̂_ref/t̂_m − (1−α)·L_m/L_ref.
 * Why: trades the speed of a GPU for this call against how busy it is; α sets the exchange rate.
 * Inputs: t̂_m(c), L_m, the capacity factor, α.
 * Trade-offs: one α for the whole pool; it must be tuned to the traffic (see src/sim/tuner.ts).
 *
 * Default: ref is the fastest instance for the call, L_ref + ε with ε = t̄(c) so an idle pool is
 * well defined, loads scaled by each instance's capacity factor, ties to the lightest then random.
 * Parity (the authors' workload_balance.py): ref is the first registered instance and gets the call
 * outright while its load is 0; A6000 and L40S loads are halved; ties go to the first registered.
 *
 * Urgency (option, θ > 0): the fast GPUs are kept for the workflows that need them. A call's slack ratio is its
 * workflow's slack (D_w − now − remaining expected time − t̂ on the fastest instance) over that remaining time;
 * its urgency u = clamp(1 − ratio/θ, 0, 1) moves α towards 1 (speed only) for calls whose workflow has little
 * slack, and leaves α for the rest, so slack-rich work takes the slower or busier servers. Calls without the
 * workflow fields keep α.
 */
import { slackRatio } from "../slack";
import type { ReleasedCall } from "../workflow-run";
import { argmaxWithTieBreak, type Candidate, type DispatchPolicy } from "./types";

export function createWorkloadBalanced(opts: { parity: boolean; urgency?: number }): DispatchPolicy {
  return {
    name: opts.parity ? "wb-parity" : "wb",
    pick(input) {
      const { candidates } = input;
      if (opts.parity) return pickParity(candidates, input.alpha);
      let ref = candidates[0];
      for (const c of candidates) if (ref === undefined || c.estimate < ref.estimate) ref = c;
      if (ref === undefined) return 0;
      const alpha = opts.urgency === undefined ? input.alpha : urgentAlpha(input.alpha, input.call, ref.estimate, input.now, opts.urgency);
      const refLoad = ref.load + input.meanCallTime;
      const scores = candidates.map(
        (c) => alpha * (ref.estimate / c.estimate) - (1 - alpha) * ((c.load * c.info.capacityFactor) / refLoad),
      );
      return argmaxWithTieBreak(scores, input);
    },
  };
}

function urgentAlpha(alpha: number, call: ReleasedCall, fastestS: number, now: number, theta: number): number {
  const ratio = slackRatio(call, fastestS, now);
  if (ratio === undefined) return alpha;
  const u = Math.min(1, Math.max(0, 1 - ratio / theta));
  return alpha + (1 - alpha) * u;
}

const PARITY_DISCOUNT: Readonly<Record<string, number>> = { A6000: 0.5, L40S: 0.5 };

function pickParity(candidates: readonly Candidate[], alpha: number): number {
  let refIndex = 0;
  candidates.forEach((c, i) => {
    const r = candidates[refIndex];
    if (r !== undefined && c.order < r.order) refIndex = i;
  });
  const ref = candidates[refIndex];
  if (ref === undefined || ref.load === 0) return refIndex;
  let best = -1;
  let bestScore = -Infinity;
  candidates.forEach((c, i) => {
    const k = PARITY_DISCOUNT[c.info.gpu] ?? 1;
    const score = alpha * (ref.estimate / c.estimate) - (1 - alpha) * ((c.load * k) / ref.load);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  });
  return best < 0 ? refIndex : best;
}
