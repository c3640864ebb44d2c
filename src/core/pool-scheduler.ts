import type { GpuType } from "./gpu";
import { Dispatcher } from "./dispatcher";
import { instantiatePolicy, type PolicyRuntime, type PolicySpec } from "./policies";
import { toInstanceInfo, type InstanceRecord } from "./pool";
import { createRng } from "./rng";
import { releaseNextStage, type ReleasedCall, type WorkflowState } from "./workflow-run";

export interface DispatchedCall {
  call: ReleasedCall;
  instanceId: string;
  /** The instance's GPU type, for the workflow's progress events. */
  gpu: GpuType;
  estimateS: number;
}

export type ReleaseResult =
  | { ok: true; state: WorkflowState; dispatched: DispatchedCall[] }
  | { ok: false; error: { code: "no_instance" | "no_healthy_instance" | "nothing_to_release"; message: string } };

/** Dispatch health (core/instance-health): who is out, and the caps of those in probation. */
export interface DispatchHealth {
  excluded: ReadonlySet<string>;
  caps: ReadonlyMap<string, number>;
}
const ALL_HEALTHY: DispatchHealth = { excluded: new Set(), caps: new Map() };

/**
 * The coordinator's scheduling logic without the Durable Object: one policy runtime and dispatcher
 * over the pool's active, healthy instances. Releasing a stage computes its budget and binds every call
 * in one step, so a workflow needs one coordinator call per stage; a failed call is bound again alone
 * (redispatch), keeping its budget and deadline.
 */
export class PoolScheduler {
  readonly runtime: PolicyRuntime;
  readonly dispatcher: Dispatcher;

  constructor(
    readonly instances: readonly InstanceRecord[],
    readonly policy: Readonly<PolicySpec>,
    alpha: number,
    seed: number,
    private readonly health: DispatchHealth = ALL_HEALTHY,
  ) {
    this.runtime = instantiatePolicy(policy);
    const active = this.dispatchable().map(toInstanceInfo);
    this.dispatcher = new Dispatcher(active.length > 0 ? active : instances.map(toInstanceInfo), this.runtime, createRng(seed), alpha);
    for (const [id, cap] of health.caps) this.dispatcher.caps.set(id, cap);
  }

  get activeCount(): number {
    return this.dispatchable().length;
  }

  private gpuOf(id: string): GpuType {
    const found = this.instances.find((i) => i.id === id);
    if (found === undefined) throw new Error(`dispatched to ${id}, which is not in the pool`);
    return found.gpu;
  }

  private dispatchable(): InstanceRecord[] {
    return this.instances.filter((i) => i.state === "active" && !this.health.excluded.has(i.id));
  }

  /** `no_healthy_instance` is passing (a workflow waits for a server to come back); `no_instance` is not. */
  private noInstance(): { code: "no_instance" | "no_healthy_instance"; message: string } {
    const active = this.instances.filter((i) => i.state === "active").length;
    return active === 0 ? { code: "no_instance", message: "the pool has no active instance" } : { code: "no_healthy_instance", message: `none of the pool's ${active} active instances is healthy` };
  }

  /** Binds one call again (its instance failed, drained or turned unhealthy), preferring one it has not failed on. */
  redispatch(call: ReleasedCall, now: number, avoid: readonly string[]): { ok: true; dispatched: DispatchedCall } | { ok: false; error: { code: "no_instance" | "no_healthy_instance"; message: string } } {
    if (this.activeCount === 0) return { ok: false, error: this.noInstance() };
    const a = this.dispatcher.assign(call, now, new Set(avoid));
    return a.ok ? { ok: true, dispatched: { call, instanceId: a.instanceId, gpu: this.gpuOf(a.instanceId), estimateS: a.estimateS } } : a;
  }

  releaseStage(state: WorkflowState, now: number): ReleaseResult {
    if (this.activeCount === 0) return { ok: false, error: this.noInstance() };
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
      dispatched.push({ call, instanceId: a.instanceId, gpu: this.gpuOf(a.instanceId), estimateS: a.estimateS });
    }
    return { ok: true, state: w, dispatched };
  }
}
