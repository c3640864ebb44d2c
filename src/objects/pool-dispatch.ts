/**
 * The coordinator's in-memory dispatch state: the scheduler built on the registry (dropped by every
 * registry, policy, α or health change), the calls bound and not yet finished (which seed every new
 * scheduler, and which the instances rebuild after a restart), and the admission glue that lives
 * across rebuilds. Kept apart so the Durable Object reads as its RPCs.
 */
import { PoolAdmission } from "../core/pool-admission";
import type { PoolScheduler } from "../core/pool-scheduler";
import type { OutstandingCall } from "./gpu-instance";

export class PoolDispatch {
  private scheduler: PoolScheduler | undefined;
  /** Calls bound to an instance and not yet finished; seeds every scheduler built on the registry. */
  private readonly outstanding = new Map<string, OutstandingCall & { instanceId: string }>();
  private cachedAdmission: PoolAdmission | undefined;
  /** The scheduler the admission's instances and queue order were taken from. */
  private admissionFor: PoolScheduler | undefined;

  get current(): PoolScheduler | undefined {
    return this.scheduler;
  }

  get admissionState(): PoolAdmission | undefined {
    return this.cachedAdmission;
  }

  invalidate(): void {
    this.scheduler = undefined;
  }

  scheduled(build: () => PoolScheduler): PoolScheduler {
    if (this.scheduler !== undefined) return this.scheduler;
    const scheduler = build();
    for (const c of this.outstanding.values()) {
      scheduler.dispatcher.loads.assign(c.instanceId, c.callId, c.estimateS);
      if (c.startedAt !== null) scheduler.dispatcher.loads.start(c.instanceId, c.callId, c.startedAt);
    }
    this.scheduler = scheduler;
    return scheduler;
  }

  restore(instanceId: string, calls: readonly OutstandingCall[]): void {
    for (const c of calls) this.outstanding.set(c.callId, { ...c, instanceId });
  }

  bound(callId: string, instanceId: string, estimateS: number): void {
    this.outstanding.set(callId, { callId, instanceId, estimateS, startedAt: null });
  }

  busy(instanceId: string): number {
    return [...this.outstanding.values()].filter((c) => c.instanceId === instanceId).length;
  }

  started(instanceId: string, started: readonly { callId: string; atS: number }[]): void {
    for (const { callId, atS } of started) {
      const c = this.outstanding.get(callId);
      if (c !== undefined) c.startedAt = atS;
      this.scheduler?.dispatcher.started(instanceId, callId, atS);
    }
  }

  finished(instanceId: string, finished: readonly string[]): void {
    for (const callId of finished) {
      this.outstanding.delete(callId);
      this.scheduler?.dispatcher.finished(instanceId, callId);
    }
  }

  /**
   * Lives across scheduler rebuilds (registry, policy and α changes), in memory: a restarted coordinator
   * forgets the work in flight until those workflows end, and its measured rate falls back to the prior.
   */
  admission(scheduler: PoolScheduler): PoolAdmission {
    if (this.cachedAdmission === undefined) this.cachedAdmission = new PoolAdmission({}, scheduler.dispatcher.instances, scheduler.policy.queue);
    else if (this.admissionFor !== scheduler) this.cachedAdmission.reconfigure(scheduler.dispatcher.instances, scheduler.policy.queue);
    this.admissionFor = scheduler;
    return this.cachedAdmission;
  }
}
