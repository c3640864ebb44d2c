/**
 * Workflow admission at a pool's events: the glue the coordinator and the simulator share, so the
 * simulator runs the production hooks at the same moments (DESIGN section 3).
 *
 * Why a separate class: the predictor (workflow-admission.ts) knows work and deadlines, not workflows'
 * templates or plans; this turns a workflow's arrival, stage releases, finished calls and end into its
 * hooks. Inputs: t̄ (the estimator's mean step time, passed at each event since the coordinator rebuilds
 * its scheduler when the registry or policy changes) and each instance's queue backlog.
 * Trade-offs: a workflow's known stages are priced by their own calls, as the budget prices them (a
 * replay, a DAG, an OpenAI-style call: all of them; a text2sql run: its first); the stages it has yet to
 * decide by its template's step means (fan-outs at their trace means). A text2sql run that goes longer
 * than its template (self-correction rounds) is under-counted until its stages release.
 */
import type { z } from "zod";
import type { QueueName } from "./policies";
import type { WorkflowSpec } from "./workflow";
import type { WorkflowState } from "./workflow-run";
import { expectedWork, remainingSteps, WorkflowAdmission, type AdmissionDecision, type WorkflowAdmissionConfigSchema } from "./workflow-admission";

/** The pool's t̄: of a step's typical call, and of one call (the estimator's, over the active instances). */
export interface PoolTimes {
  meanStepTime(step: string): number;
  meanCallTime(call: { step: string; inputTokens: number; expectedOutputTokens: number }): number;
  expectedOutput(step: string): number;
}

/** Work and critical path of stages whose calls are known. */
function stagesWork(stages: WorkflowSpec["stages"], t: PoolTimes): { workS: number; criticalPathS: number } {
  let workS = 0;
  let criticalPathS = 0;
  for (const stage of stages) {
    let longest = 0;
    for (const c of stage.calls) {
      const s = t.meanCallTime({ step: c.step, inputTokens: c.inputTokens, expectedOutputTokens: c.expectedOutputTokens ?? t.expectedOutput(c.step) });
      workS += s;
      longest = Math.max(longest, s);
    }
    criticalPathS += longest;
  }
  return { workS, criticalPathS };
}

/** Only a text2sql run decides its stages as it goes; every other kind arrives with all of them. */
const decidesAsItGoes = (spec: WorkflowSpec): boolean => spec.kind === "text2sql";

export interface AdmissionInstance {
  id: string;
  capacityFactor: number;
}

export class PoolAdmission {
  private predictor: WorkflowAdmission;

  /** Unless the config says, the predictor's queue order is the policy's: FIFO for fcfs, deadline otherwise. */
  constructor(
    private readonly config: z.input<typeof WorkflowAdmissionConfigSchema>,
    instances: readonly AdmissionInstance[],
    queue: QueueName,
  ) {
    this.predictor = new WorkflowAdmission(this.withOrder(queue), instances);
  }

  get admission(): WorkflowAdmission {
    return this.predictor;
  }

  /** The registry or the policy changed: what is committed and measured carries over. */
  reconfigure(instances: readonly AdmissionInstance[], queue: QueueName): void {
    this.predictor = new WorkflowAdmission(this.withOrder(queue), instances, this.predictor.snapshot());
  }

  /**
   * Decides, and records the workflow as admitted unless it is refused. Schedule it with the decision's sloS.
   * Not `enforce`d, every workflow is admitted with its own SLO and still counted, so turning admission on
   * later starts from what the pool really carries.
   */
  arrive(id: string, spec: WorkflowSpec, sloS: number, now: number, bestEffortAllowed: boolean, t: PoolTimes, enforce = true): AdmissionDecision {
    const known = stagesWork(spec.stages, t);
    const rest = decidesAsItGoes(spec) ? expectedWork(spec.template.slice(spec.stages.length), (s) => t.meanStepTime(s), this.predictor.config.fanOut) : { workS: 0, criticalPathS: 0 };
    const workS = known.workS + rest.workS;
    const criticalPathS = known.criticalPathS + rest.criticalPathS;
    const decided = this.predictor.decide(now, { sloS, workS, criticalPathS, bestEffortAllowed });
    const d: AdmissionDecision = enforce ? decided : { decision: "admit", predictedS: decided.predictedS, retryAfterS: null, sloS };
    if (d.decision !== "reject") this.predictor.admitted(id, { deadlineS: now + d.sloS, workS, bestEffort: d.decision === "best-effort" });
    return d;
  }

  released(w: WorkflowState, calls: readonly { callId: string; instanceId: string; estimateS: number }[], t: PoolTimes): void {
    const remaining = decidesAsItGoes(w.spec)
      ? expectedWork(remainingSteps(w.plan), (s) => t.meanStepTime(s), this.predictor.config.fanOut).workS
      : stagesWork(w.spec.stages.slice(w.stageIndex + 1), t).workS;
    this.predictor.stageReleased(w.id, calls, remaining);
  }

  /** `backlogged`: the instance still has calls queued in front of its server (it was saturated). */
  finished(now: number, instanceId: string, callIds: readonly string[], backlogged: boolean): void {
    this.predictor.callsFinished(now, instanceId, callIds, backlogged);
  }

  ended(id: string): void {
    this.predictor.ended(id);
  }

  private withOrder(queue: QueueName): z.input<typeof WorkflowAdmissionConfigSchema> {
    return { queueOrder: queue === "fcfs" ? "arrival" : "deadline", ...this.config };
  }
}
