import { z } from "zod";

/**
 * "The workflow's expected remaining stages" of the SLO budget (DESIGN section 2). Each workflow
 * carries its own plan state; a planner says what is expected after a released stage.
 */
export const PlanStateSchema = z.object({
  template: z.array(z.string()),
  cursor: z.number().int().nonnegative(),
  /** Parity mode: the private list a workflow gets once it leaves the authors' shared one. */
  own: z.array(z.string()).optional(),
});
export type PlanState = z.infer<typeof PlanStateSchema>;

export interface StagePlanner {
  /** Records that a stage of `step` was released; returns the step types still expected after it. */
  onRelease(plan: PlanState, step: string): readonly string[];
}

export function newPlan(template: readonly string[]): PlanState {
  return { template: [...template], cursor: 0 };
}

/**
 * Default: the template is an ordered expectation with a cursor. Releasing step s jumps to the next
 * occurrence of s, so phases that were skipped (no keyword call, fewer revise rounds than expected)
 * leave the plan at once; a step the template does not expect there (an eleventh revise) changes
 * nothing. The end of self-correction therefore drops its unused rounds as DESIGN section 2 asks.
 */
export const cursorPlanner: StagePlanner = {
  onRelease(plan, step) {
    const at = plan.template.indexOf(step, plan.cursor);
    if (at >= 0) plan.cursor = at + 1;
    return plan.template.slice(plan.cursor);
  },
};

/**
 * The authors' behaviour (simulator/core/request.py): every workflow starts on ONE module-level list
 * and removes the first occurrence of each released step from it, so workflows empty it for one
 * another and budgets inflate. A workflow that reaches unit_tester while revise is still listed
 * filters revise out into a private copy, and only from then on owns its list. One planner instance
 * is one simulation's shared list.
 */
export function createParitySharedPlanner(template: readonly string[]): StagePlanner {
  const shared = [...template];
  return {
    onRelease(plan, step) {
      const list = plan.own ?? shared;
      const at = list.indexOf(step);
      if (at >= 0) list.splice(at, 1);
      if (step === "unit_tester" && list.includes("revise")) plan.own = list.filter((s) => s !== "revise");
      return plan.own ?? shared;
    },
  };
}

/**
 * B = (S - (r - a)) * t̄(k) / (t̄(k) + Σ t̄(remaining)): the workflow's remaining SLO split in
 * proportion to expected stage times. Negative when the workflow is already late.
 */
export function stageBudget(remainingSloS: number, stageMeanS: number, remainingMeanS: number): number {
  const denom = stageMeanS + remainingMeanS;
  return denom > 0 ? (remainingSloS * stageMeanS) / denom : remainingSloS;
}
