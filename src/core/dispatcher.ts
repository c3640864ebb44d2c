import type { Candidate } from "./dispatch/types";
import { Estimator, type InstanceInfo } from "./estimator";
import { LoadTracker } from "./load";
import type { PolicyRuntime } from "./policies";
import type { Rng } from "./rng";
import type { ReleasedCall } from "./workflow-run";

export interface Assignment {
  instanceId: string;
  estimateS: number;
}

/**
 * The global half of the scheduler: binds each released call to one instance and keeps L_m.
 * Calls of a stage are bound one after another, each seeing the load the previous ones added.
 */
export class Dispatcher {
  readonly estimator: Estimator;
  readonly loads: LoadTracker;
  private readonly order = new Map<string, number>();

  constructor(
    readonly instances: readonly InstanceInfo[],
    private readonly policy: PolicyRuntime,
    private readonly rng: Rng,
    public alpha: number,
  ) {
    this.estimator = new Estimator(instances, policy.stepTokens, policy.estimatorMode);
    this.loads = new LoadTracker(policy.loadMode);
    instances.forEach((inst, i) => this.order.set(inst.id, i));
  }

  assign(call: ReleasedCall, now: number): Assignment {
    const candidates: Candidate[] = this.instances.map((info, order) => ({
      info,
      order,
      load: this.loads.load(info.id, now),
      estimate: this.estimator.onInstance(info, call),
    }));
    const i = this.policy.dispatch.pick({
      call,
      candidates,
      meanCallTime: this.estimator.meanCallTime(call),
      alpha: this.alpha,
      rng: this.rng,
    });
    const chosen = candidates[i] ?? candidates[0];
    if (chosen === undefined) throw new Error("Dispatcher: no instance to dispatch to");
    this.loads.assign(chosen.info.id, call.id, chosen.estimate);
    return { instanceId: chosen.info.id, estimateS: chosen.estimate };
  }

  started(instanceId: string, callId: string, now: number): void {
    this.loads.start(instanceId, callId, now);
  }

  finished(instanceId: string, callId: string): void {
    this.loads.release(instanceId, callId);
  }
}
