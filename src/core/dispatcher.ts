import type { Candidate } from "./dispatch/types";
import type { CostCoeffs } from "./cost-model";
import { Estimator, type InstanceInfo } from "./estimator";
import { LoadTracker } from "./load";
import type { PolicyRuntime } from "./policies";
import type { Rng } from "./rng";
import type { ReleasedCall } from "./workflow-run";

export type Assignment =
  | { ok: true; instanceId: string; estimateS: number }
  | { ok: false; error: { code: "no_instance"; message: string } };

/**
 * The global half of the scheduler: binds each released call to one instance and keeps L_m.
 * Calls of a stage are bound one after another, each seeing the load the previous ones added.
 */
export class Dispatcher {
  readonly estimator: Estimator;
  readonly loads: LoadTracker;
  private readonly order = new Map<string, number>();
  /**
   * Most calls an instance may hold (queued and running) when set: an instance in probation after an
   * outage gets a few calls, not a stage's worth (core/instance-health).
   */
  readonly caps = new Map<string, number>();

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

  /**
   * Filter (instances that can hold the call, under their cap if any is), score and pick, as the policy says.
   * `avoid`: the instances a retried call already failed on, passed over while another can take it.
   */
  assign(call: ReleasedCall, now: number, avoid: ReadonlySet<string> = new Set()): Assignment {
    const need = call.inputTokens + call.expectedOutputTokens;
    const holds = this.instances.filter((info) => info.maxTokens === undefined || need <= info.maxTokens);
    const underCap = holds.filter((info) => {
      const cap = this.caps.get(info.id);
      if (cap === undefined) return true;
      const { queued, running } = this.loads.counts(info.id);
      return queued + running < cap;
    });
    // A cap steers work away from an instance on probation; when nothing else can take the call it still goes there.
    const fits = underCap.length > 0 ? underCap : holds;
    const fresh = fits.filter((info) => !avoid.has(info.id));
    const preferred = fresh.length > 0 ? fresh : fits;
    const ahead = this.policy.spec.loadView === "ahead";
    const candidates: Candidate[] = preferred.map((info) => {
      const estimate = this.estimator.onInstance(info, call);
      const load = ahead ? this.loads.loadAhead(info.id, this.policy.queue.key(call, estimate, now), now) : this.loads.load(info.id, now);
      return { info, order: this.order.get(info.id) ?? 0, load, estimate };
    });
    if (candidates.length === 0) {
      return { ok: false, error: { code: "no_instance", message: `no instance can hold call ${call.id} (${need} tokens)` } };
    }
    const i = this.policy.dispatch.pick({
      call,
      candidates,
      meanCallTime: this.estimator.meanCallTime(call),
      alpha: this.alpha,
      rng: this.rng,
      now,
    });
    const chosen = candidates[i] ?? candidates[0];
    if (chosen === undefined) return { ok: false, error: { code: "no_instance", message: "dispatch policy chose no instance" } };
    this.loads.assign(chosen.info.id, call.id, chosen.estimate, this.policy.queue.key(call, chosen.estimate, now));
    return { ok: true, instanceId: chosen.info.id, estimateS: chosen.estimate };
  }

  /**
   * A new cost model for one instance (its calibration moved), in place: the policy's own state (a
   * round-robin cursor) and the loads carry on, as they would not through a new dispatcher.
   */
  setCost(instanceId: string, cost: CostCoeffs): void {
    const info = this.instances.find((i) => i.id === instanceId);
    if (info === undefined) return;
    info.cost = cost;
    this.estimator.repriced();
  }

  started(instanceId: string, callId: string, now: number): void {
    this.loads.start(instanceId, callId, now);
  }

  finished(instanceId: string, callId: string): void {
    this.loads.release(instanceId, callId);
  }
}
