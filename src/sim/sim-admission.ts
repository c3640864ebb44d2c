import { PoolAdmission } from "../core/pool-admission";
import type { WorkflowAdmission, WorkflowAdmissionConfigSchema } from "../core/workflow-admission";
import type { Dispatcher } from "../core/dispatcher";
import type { QueueName } from "../core/policies";
import type { WorkflowState } from "../core/workflow-run";
import type { z } from "zod";
import type { WorkloadItem } from "./workload";

/** Workflow admission in a simulated run (off unless given): the coordinator's hooks at the same events. */
export interface SimAdmissionOptions {
  config: z.input<typeof WorkflowAdmissionConfigSchema>;
  /** Rejected workflows run as best-effort (the tenant allows it) instead of being turned away. */
  bestEffort: boolean;
}

export interface RejectedWorkflow {
  id: string;
  arrivalS: number;
  sloS: number;
  predictedS: number;
  retryAfterS: number | null;
}

export type ArrivalVerdict = { run: false } | { run: true; scheduleSloS: number; bestEffort: boolean };

/** The pool's admission hooks (core/pool-admission, as the coordinator runs them) plus the refusals, for the results. */
export class SimAdmission {
  readonly pool: PoolAdmission;
  readonly rejected: RejectedWorkflow[] = [];
  private readonly bestEffort: boolean;

  constructor(
    opts: SimAdmissionOptions,
    private readonly dispatcher: Dispatcher,
    queue: QueueName,
  ) {
    this.pool = new PoolAdmission(opts.config, dispatcher.instances, queue);
    this.bestEffort = opts.bestEffort;
  }

  get admission(): WorkflowAdmission {
    return this.pool.admission;
  }


  arrive(item: WorkloadItem, sloS: number, now: number): ArrivalVerdict {
    const d = this.pool.arrive(item.id, item.spec, sloS, now, this.bestEffort, this.dispatcher.estimator);
    if (d.decision === "reject") {
      this.rejected.push({ id: item.id, arrivalS: now, sloS, predictedS: d.predictedS, retryAfterS: d.retryAfterS });
      return { run: false };
    }
    return { run: true, scheduleSloS: d.sloS, bestEffort: d.decision === "best-effort" };
  }

  released(w: WorkflowState, calls: readonly { callId: string; instanceId: string; estimateS: number }[]): void {
    this.pool.released(w, calls, this.dispatcher.estimator);
  }

  finished(now: number, instanceId: string, callIds: readonly string[]): void {
    this.pool.finished(now, instanceId, callIds, this.dispatcher.loads.counts(instanceId).queued > 0);
  }

  ended(id: string): void {
    this.pool.ended(id);
  }
}
