import type { ReleasedCall } from "./workflow-run";

/**
 * A call's workflow slack as a multiple of the work it still needs: (D_w − now − R_after − t̂) / (R_after + t̂),
 * where R_after is the expected time of the stages after this call and t̂ the call's estimate. 0 means the
 * workflow must run flat out from now on; negative, it is late. Undefined for calls released without the
 * workflow fields (older stored calls).
 */
export function slackRatio(call: Pick<ReleasedCall, "workflowDeadlineS" | "remainingAfterS">, estimateS: number, now: number): number | undefined {
  if (call.workflowDeadlineS === undefined) return undefined;
  const need = (call.remainingAfterS ?? 0) + estimateS;
  return (call.workflowDeadlineS - now - need) / Math.max(need, 1e-9);
}
