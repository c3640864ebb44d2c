import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import type { GpuType } from "../core/gpu";
import { getPolicy, type QueueName } from "../core/policies";
import { InstanceUpdateSchema, toInstanceInfo, updatedRecord, type InstanceRecord } from "../core/pool";
import { transportProblem, upstreamFetcher } from "../upstream/transport";
import { PoolScheduler, type ReleaseResult } from "../core/pool-scheduler";
import { baseSloSeconds } from "../core/slo";
import type { ReleasedCall, WorkflowState } from "../core/workflow-run";
import type { WorkflowSpec } from "../core/workflow";
import type { AdmissionDecision } from "../core/workflow-admission";
import { err, ok, type Result } from "./result";
import { PoolDispatch } from "./pool-dispatch";
import { instanceObjectName } from "./names";
import { migrate } from "./sqlite";
import { rearmStoredAlarm } from "./alarm";
import { InstanceRegistry } from "./instance-registry";
import { PoolHealth } from "./pool-health";
import { HealthMonitor } from "./health-monitor";
import { requestRetune } from "./retune";
import { ServiceObservationSchema } from "../core/calibration";
import { WorkflowSampleSchema } from "../core/degradation";
import { COORDINATOR_MIGRATIONS, DEFAULTS, loadSettings, poolView, saveSettings, type PoolView, type Settings, type TuningContext } from "./pool-settings";
import { installedAlpha, newInstance, updatedPolicy } from "./pool-changes";

export { PolicyUpdateSchema, type PoolView, type TuningContext } from "./pool-settings";

const ServicesSchema = z.array(ServiceObservationSchema);

export type RedispatchResult = { ok: true; instanceId: string; gpu: GpuType; estimateS: number; queuePolicy: QueueName } | { ok: false; error: { code: "no_instance" | "no_healthy_instance"; message: string } };

/**
 * One per GPU pool: the instance registry, outstanding load, the pool's policy and α (versioned),
 * the instances' health, and the pool clock. Each released stage is one RPC (releaseStage); instances
 * report starts, finishes and outcomes; a failed call comes back through redispatch. Its one alarm
 * probes every instance's `/health` (health-monitor.ts), off the request path. The scheduling itself
 * is src/core's PoolScheduler.
 */
export class CoordinatorObject extends DurableObject<Env> {
  private readonly registry: InstanceRegistry;
  private readonly dispatch = new PoolDispatch();
  private cachedHealth: PoolHealth | undefined;
  private readonly monitor: HealthMonitor;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.registry = new InstanceRegistry(ctx.storage.sql);
    migrate(ctx.storage.sql, COORDINATOR_MIGRATIONS);
    this.monitor = new HealthMonitor(ctx.storage.sql);
    this.monitor.configure(this.settings().health);
    ctx.blockConcurrencyWhile(async () => {
      // After a restart the instances, which persist their queues, say what is outstanding. Calls
      // released but not yet enqueued at that moment are missed: a transient underestimate of load.
      const pool = this.settings().pool;
      await Promise.all(
        this.records().map(async (r) => this.dispatch.restore(r.id, await this.env.GPU_INSTANCE.getByName(instanceObjectName(pool, r.id)).outstanding())),
      );
      if (this.records().length > 0) await rearmStoredAlarm(ctx.storage, Date.now() + this.monitor.config.probeIntervalMs);
    });
  }

  /** Probes every instance, acts on status changes, and re-arms: idempotent, whatever fired it. */
  override async alarm(): Promise<void> {
    const records = this.records();
    if (records.length === 0) return;
    const changed = await this.monitor.probe(records, (r) => upstreamFetcher(this.env, r), () => Date.now());
    if (changed.length > 0) await this.healthChanged(changed);
    await this.ctx.storage.setAlarm(Date.now() + this.monitor.config.probeIntervalMs);
  }

  /** Dispatch is rebuilt without (or with) the instances, and each is told whether to take work. */
  private async healthChanged(ids: readonly string[]): Promise<void> {
    this.registryChanged();
    await Promise.all(ids.map((id) => this.record(id)).map((r) => (r === undefined ? undefined : this.configureInstance(r))));
  }

  /** Pool-clock seconds: real time × the pool's time scale (DESIGN section 5). */
  clock(): { nowS: number; timeScale: number; baseSloS: number | null } {
    const active = this.records().filter((r) => r.state === "active");
    return { nowS: this.nowS(), timeScale: this.settings().timeScale ?? 1, baseSloS: active.length > 0 ? baseSloSeconds(active.map(toInstanceInfo)) : null };
  }

  /** The pool clock alone: the hot paths need no base SLO (which prices the template on every instance). */
  private nowS(): number {
    return (Date.now() / 1000) * (this.settings().timeScale ?? 1);
  }

  async register(pool: string, input: unknown): Promise<Result<InstanceRecord>> {
    const s = this.settings();
    const made = newInstance(input, this.records(), s, Date.now());
    if (!made.ok) return made;
    const rec = made.value;
    const refused = transportProblem(this.env, rec);
    if (refused !== undefined) return err("invalid_request", refused);
    this.registry.insert(rec);
    this.saveSettings({ ...s, pool, timeScale: rec.timeScale });
    this.registryChanged();
    await this.configureInstance(rec);
    await rearmStoredAlarm(this.ctx.storage, Date.now() + this.monitor.config.probeIntervalMs);
    return ok(rec);
  }

  async update(id: string, input: unknown): Promise<Result<InstanceRecord>> {
    const rec = this.record(id);
    if (rec === undefined) return err("not_found", `no instance ${id}`);
    const parsed = InstanceUpdateSchema.safeParse(input);
    if (!parsed.success) return err("invalid_request", z.prettifyError(parsed.error));
    const next = updatedRecord(rec, parsed.data);
    const refused = transportProblem(this.env, next);
    return refused === undefined ? ok(await this.save(next)) : err("invalid_request", refused);
  }

  /** Draining stops new dispatches; the instance finishes what it runs and hands its queue back for re-dispatch. */
  async setState(id: string, state: "active" | "draining"): Promise<Result<InstanceRecord>> {
    const rec = this.record(id);
    if (rec === undefined) return err("not_found", `no instance ${id}`);
    return ok(await this.save({ ...rec, state }));
  }

  remove(id: string): Result<{ id: string }> {
    if (this.record(id) === undefined) return err("not_found", `no instance ${id}`);
    const busy = this.dispatch.busy(id);
    if (busy > 0) return err("conflict", `instance ${id} still has ${busy} calls; drain it first`);
    this.registry.delete(id);
    this.health.forget(id);
    this.monitor.forget(id);
    this.registryChanged();
    return ok({ id });
  }

  async setPolicy(input: unknown): Promise<Result<PoolView>> {
    const updated = updatedPolicy(input, this.settings());
    if (!updated.ok) return updated;
    this.saveSettings(updated.value);
    this.monitor.configure(updated.value.health);
    this.dispatch.invalidate();
    await Promise.all(this.records().map((r) => this.configureInstance(r)));
    return ok(this.pool());
  }

  tuningContext(): TuningContext {
    const { pool, policy, alpha, alphaVersion, pinned } = this.settings();
    return { pool, policy, alpha, alphaVersion, pinned, instances: this.calibratedRecords() };
  }

  /** The tuner's install (pool-changes.ts installedAlpha says when it is refused). */
  installAlpha(alpha: number, basedOnVersion: number): Result<{ alphaVersion: number }> {
    const installed = installedAlpha(alpha, basedOnVersion, this.settings());
    if (!installed.ok) return installed;
    this.saveSettings(installed.value);
    // α only weighs dispatch scores: a new scheduler picks it up, the instances' queues are unaffected.
    this.dispatch.invalidate();
    return ok({ alphaVersion: installed.value.alphaVersion });
  }

  /** The tuner calls this after every decision, installed or not: the degradation trigger rebases on it. */
  tuningDone(): void {
    this.health.tuned(this.nowS());
  }

  /**
   * Pool-level admission control (src/core/workflow-admission.ts): can this workflow still meet its deadline,
   * given the work already committed and the pool's measured rate? An admitted workflow is scheduled with the
   * decision's sloS (a best-effort one's is far looser than its own).
   */
  admit(input: { workflowId: string; spec: WorkflowSpec; sloS: number; bestEffortAllowed: boolean }): AdmissionDecision {
    if (this.records().length === 0) return { decision: "admit", predictedS: 0, retryAfterS: null, sloS: input.sloS };
    const scheduler = this.getScheduler();
    const enforce = this.settings().admission === "enforce";
    return this.dispatch.admission(scheduler).arrive(input.workflowId, input.spec, input.sloS, this.nowS(), input.bestEffortAllowed, scheduler.dispatcher.estimator, enforce);
  }

  /**
   * A workflow ended (any outcome; once per workflow, from its alarm). A success brings its latency (pool
   * clock); a significant degradation asks the tuner to re-tune now.
   */
  workflowEnded(workflowId: string, latency: unknown): void {
    this.dispatch.admissionState?.ended(workflowId);
    const sample = WorkflowSampleSchema.safeParse(latency);
    if (!sample.success) return;
    const { trigger, reason } = this.health.workflowEnded(sample.data, this.nowS());
    if (trigger) this.ctx.waitUntil(requestRetune(this.env, this.settings().pool, reason));
  }

  pool(): PoolView {
    const scheduler = this.records().length > 0 ? this.getScheduler() : undefined;
    const { nowS, baseSloS } = this.clock();
    return poolView(this.settings(), this.records(), scheduler?.dispatcher.loads, this.health, this.monitor, nowS, baseSloS, this.dispatch.admissionState?.admission);
  }

  /** Budgets and binds every call of the workflow's next stage; one RPC per stage. */
  releaseStage(state: WorkflowState): ReleaseResult & { alphaVersion: number; queuePolicy: QueueName } {
    const s = this.settings();
    if (this.records().length === 0) return { ok: false, error: { code: "no_instance", message: "the pool has no instance" }, alphaVersion: s.alphaVersion, queuePolicy: "fcfs" };
    const scheduler = this.getScheduler();
    const result = scheduler.releaseStage(state, this.nowS());
    if (result.ok) {
      for (const d of result.dispatched) this.dispatch.bound(d.call.id, d.instanceId, d.estimateS);
      this.dispatch.admission(scheduler).released(result.state, result.dispatched.map((d) => ({ callId: d.call.id, instanceId: d.instanceId, estimateS: d.estimateS })), scheduler.dispatcher.estimator);
    }
    return { ...result, alphaVersion: s.alphaVersion, queuePolicy: scheduler.policy.queue };
  }

  /**
   * A call that failed, or whose instance drained or turned unhealthy before running it, bound again with
   * its budget and deadline, preferring another instance. The workflow enqueues it there.
   */
  redispatch(call: ReleasedCall, avoid: readonly string[]): RedispatchResult {
    const s = this.settings();
    if (this.records().length === 0) return { ok: false, error: { code: "no_instance", message: "the pool has no instance" } };
    const scheduler = this.getScheduler();
    const r = scheduler.redispatch(call, this.nowS(), avoid);
    if (!r.ok) return r;
    const { instanceId, gpu, estimateS } = r.dispatched;
    this.dispatch.bound(call.id, instanceId, estimateS);
    return { ok: true, instanceId, gpu, estimateS, queuePolicy: getPolicy(s.policy)?.queue ?? "fcfs" };
  }

  /**
   * What an instance admitted and finished since its last report (instances batch them, so one RPC
   * carries many calls under load). Finished, failed or cancelled calls leave the outstanding load;
   * repeats are harmless. Successful calls' service times calibrate the instance's cost model; every
   * outcome is evidence of the instance's health; only successes count as work the pool served.
   */
  async callsChanged(instanceId: string, started: readonly { callId: string; atS: number }[], finished: readonly string[], services: unknown = [], outcomes: unknown = []): Promise<void> {
    const rec = this.record(instanceId);
    const { failed, moved } = rec === undefined ? { failed: new Set<string>(), moved: false } : this.monitor.observeCalls(instanceId, outcomes, Date.now());
    const observed = ServicesSchema.safeParse(services);
    if (rec !== undefined && observed.success && this.health.observeServices(instanceId, rec.cost, observed.data) && this.settings().calibration === "apply") this.dispatch.current?.dispatcher.setCost(instanceId, this.health.cost(instanceId, rec.cost));
    this.dispatch.started(instanceId, started);
    this.dispatch.finished(instanceId, finished);
    const served = failed.size === 0 ? finished : finished.filter((id) => !failed.has(id));
    if (served.length > 0) this.dispatch.admissionState?.finished(this.nowS(), instanceId, served, (this.dispatch.current?.dispatcher.loads.counts(instanceId).queued ?? 0) > 0);
    if (moved) await this.healthChanged([instanceId]);
  }

  private getScheduler(): PoolScheduler {
    return this.dispatch.scheduled(() => {
      const s = this.settings();
      const policy = getPolicy(s.policy) ?? getPolicy(DEFAULTS.policy);
      if (policy === undefined) throw new Error("default policy missing from the registry");
      const records = this.calibratedRecords();
      return new PoolScheduler(records, policy, s.alpha, s.alphaVersion, this.monitor.dispatchHealth(records.map((r) => r.id)));
    });
  }

  private records(): InstanceRecord[] {
    return this.registry.all();
  }

  /** The registry, with each instance's calibrated cost model in place of its profile's when the pool applies calibration. */
  private calibratedRecords(): InstanceRecord[] {
    if (this.settings().calibration !== "apply") return this.records();
    return this.records().map((r) => ({ ...r, cost: this.health.cost(r.id, r.cost) }));
  }

  private get health(): PoolHealth {
    this.cachedHealth ??= new PoolHealth(this.ctx.storage.sql);
    return this.cachedHealth;
  }

  private record(id: string): InstanceRecord | undefined {
    return this.registry.get(id);
  }

  /** The scheduler is built on the registry: every write drops it. */
  private registryChanged(): void {
    this.dispatch.invalidate();
  }

  private async save(rec: InstanceRecord): Promise<InstanceRecord> {
    this.registry.update(rec);
    this.registryChanged();
    await this.configureInstance(rec);
    return rec;
  }

  private async configureInstance(rec: InstanceRecord): Promise<void> {
    const s = this.settings();
    const queue = getPolicy(s.policy)?.queue ?? "fcfs";
    await this.env.GPU_INSTANCE.getByName(instanceObjectName(s.pool, rec.id)).configure(rec, s.pool, queue, this.monitor.dispatchHealth([rec.id]).excluded.size === 0);
  }

  private settings(): Settings {
    return loadSettings(this.ctx.storage.sql);
  }

  private saveSettings(s: Settings): void {
    saveSettings(this.ctx.storage.sql, s);
  }
}
