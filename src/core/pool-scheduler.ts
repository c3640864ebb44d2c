import { Dispatcher } from "./dispatcher";
import { instantiatePolicy, type PolicyRuntime, type PolicySpec } from "./policies";
import { toInstanceInfo, type InstanceRecord } from "./pool";
import { createRng } from "./rng";
import { releaseNextStage, type ReleasedCall, type WorkflowState } from "./workflow-run";

export interface DispatchedCall {
  call: ReleasedCall;
  instanceId: string;
  estimateS: number;
}

export type ReleaseResult =
  | { ok: true; state: WorkflowState; dispatched: DispatchedCall[] }
  | { ok: false; error: { code: "no_instance" | "nothing_to_release"; message: string } };

/**
 * The coordinator's scheduling logic without the Durable Object: one policy runtime and dispatcher
 * over the pool's active instances. Releasing a stage computes its budget and binds every call in
 * one step, so a workflow needs one coordinator call per stage.
 */
export class PoolScheduler {
  readonly runtime: PolicyRuntime;
  readonly dispatcher: Dispatcher;

  constructor(
    readonly instances: readonly InstanceRecord[],
    readonly policy: Readonly<PolicySpec>,
    alpha: number,
    seed: number,
  ) {
    this.runtime = instantiatePolicy(policy);
    const active = instances.filter((i) => i.state === "active").map(toInstanceInfo);
    this.dispatcher = new Dispatcher(active.length > 0 ? active : instances.map(toInstanceInfo), this.runtime, createRng(seed), alpha);
  }

  get activeCount(): number {
    return this.instances.filter((i) => i.state === "active").length;
  }

  releaseStage(state: WorkflowState, now: number): ReleaseResult {
    if (this.activeCount === 0) return { ok: false, error: { code: "no_instance", message: "the pool has no active instance" } };
    const w: WorkflowState = structuredClone(state);
    const ctx = {
      planner: this.runtime.planner,
      meanStepTime: (s: string) => this.dispatcher.estimator.meanStepTime(s),
      expectedOutput: (s: string) => this.dispatcher.estimator.expectedOutput(s),
    };
    const calls = releaseNextStage(w, ctx, now);
    if (calls.length === 0) return { ok: false, error: { code: "nothing_to_release", message: `workflow ${w.id} has no stage to release` } };
    const dispatched: DispatchedCall[] = [];
    for (const call of calls) {
      const a = this.dispatcher.assign(call, now);
      if (!a.ok) {
        for (const d of dispatched) this.dispatcher.finished(d.instanceId, d.call.id);
        return { ok: false, error: a.error };
      }
      dispatched.push({ call, instanceId: a.instanceId, estimateS: a.estimateS });
    }
    return { ok: true, state: w, dispatched };
  }
}
