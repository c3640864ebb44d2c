/**
 * lst: least workflow slack first, key = D_w − R_after − t̂_m(c): the latest moment this call can start for its
 * workflow to finish on time, if the stages after it take their expected times.
 * Why: least laxity (pq) judges a call by its stage's share of the remaining SLO, split in proportion to
 * expected stage times; a workflow that ran fast so far carries its saved time in later stages' budgets
 * only. The latest start time gives all of a workflow's slack to the call at hand, so a workflow that fell
 * behind (after a long queue or a slow GPU) overtakes one that is ahead, whatever stage either is in.
 * Inputs: the workflow deadline, the expected time of its remaining stages (both set at release), t̂.
 * Trade-offs: trusts the remaining-stage means; a workflow with many expected rounds left looks urgent early.
 * Calls released without the workflow fields (older stored calls) fall back to their stage deadline.
 */
import type { QueuePolicy } from "./types";

export const leastSlack: QueuePolicy = {
  name: "lst",
  key: (call, est) => (call.workflowDeadlineS === undefined ? call.deadlineS : call.workflowDeadlineS - (call.remainingAfterS ?? 0)) - est,
};
