/**
 * A clairvoyant release, for measurement only (issue 11): each released call carries its true output length, and
 * its budget and workflow fields are computed from the workflow's true remaining stages instead of the template's
 * expectation. No scheduler can know these; running a policy on them says how much better prediction could buy it,
 * i.e. whether the room left below the limits is a forecasting problem or a scheduling one.
 */
import type { Estimator } from "../core/estimator";
import { stageBudget } from "../core/remaining";
import type { ReleasedCall, WorkflowState } from "../core/workflow-run";

/** The stage's time on the pool's average GPU: its slowest call, with true output lengths. */
function stageSeconds(est: Estimator, calls: readonly { step: string; inputTokens: number; outputTokens: number }[]): number {
  let slowest = 0;
  for (const c of calls) slowest = Math.max(slowest, est.meanCallTime({ step: c.step, inputTokens: c.inputTokens, expectedOutputTokens: c.outputTokens }));
  return slowest;
}

/** The calls `releaseNextStage` just released for `w` at `now`, rewritten with the truth. */
export function clairvoyant(calls: readonly ReleasedCall[], w: WorkflowState, est: Estimator, now: number): ReleasedCall[] {
  const first = calls[0];
  if (first === undefined) return [...calls];
  let after = 0;
  for (const stage of w.spec.stages.slice(first.stageIndex + 1)) after += stageSeconds(est, stage.calls);
  const budgetS = stageBudget(w.sloS - (now - w.arrivalS), stageSeconds(est, calls), after);
  return calls.map((c) => ({ ...c, expectedOutputTokens: c.outputTokens, budgetS, deadlineS: now + budgetS, remainingAfterS: after }));
}
