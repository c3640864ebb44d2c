/**
 * triage: any base order, with the calls of workflows that can no longer meet their deadline moved behind every
 * other call.
 * Why: least laxity and EDF serve the latest work first. Under tight deadlines a workflow that is already lost then
 * takes the capacity that on-time workflows need, and makes them late too (the domino effect of deadline scheduling
 * in overload). Nothing is dropped: a lost workflow still runs, after the rest, and counts as a miss when it ends.
 * Inputs: the workflow deadline and expected remaining time (set at release), t̂ on this instance, the enqueue time,
 * and h: a workflow is lost when its slack ratio (core/slack) is below −h, i.e. it is late by more than h times
 * the work it still needs.
 * Trade-offs: "lost" trusts the expected remaining time, so a workflow whose later stages turn out short can be
 * demoted wrongly; h > 0 buys tolerance for that. Calls released without the workflow fields are never demoted.
 */
import { slackRatio } from "../slack";
import type { QueuePolicy } from "./types";

/** Keys are absolute seconds; a demoted call's key is this much later, so it sorts behind every on-time call. */
export const DEMOTED_OFFSET_S = 1e9;

export function withTriage(base: QueuePolicy, h: number): QueuePolicy {
  return {
    name: `${base.name}+triage`,
    key(call, est, enqueuedAt) {
      const key = base.key(call, est, enqueuedAt);
      const ratio = slackRatio(call, est, enqueuedAt);
      return ratio !== undefined && ratio < -h ? key + DEMOTED_OFFSET_S : key;
    },
  };
}
