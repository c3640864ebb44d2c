import { CHESS_STEP_MEANS, CHESS_TEMPLATE, type StepTokens } from "./chess";
import { Estimator, type InstanceInfo } from "./estimator";

/**
 * Base SLO (DESIGN section 5): Σ t̄ over the CHESS template, i.e. the no-queueing critical path of a
 * typical workflow on the pool's average GPU. A workflow's SLO is a scale times this.
 */
export function baseSloSeconds(
  instances: readonly InstanceInfo[],
  template: readonly string[] = CHESS_TEMPLATE,
  stepTokens: Readonly<Record<string, StepTokens>> = CHESS_STEP_MEANS,
): number {
  const est = new Estimator(instances, stepTokens, "call");
  return template.reduce((sum, step) => sum + est.meanStepTime(step), 0);
}
