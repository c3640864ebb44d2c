/**
 * A WorkflowObject's failed calls (core/call-retry): a failure the server caused goes to another
 * instance with its original budget and deadline, at most MAX_CALL_ATTEMPTS executions in all; a call
 * handed back unrun (its instance drained or turned unhealthy) goes elsewhere without spending an
 * attempt; a request the server refused as such fails the workflow with that reason.
 *
 * Each send is persisted before any RPC (table `redispatch`), with the instance once the coordinator has
 * bound it, so a restart in between resumes it from the alarm instead of losing or doubling it: a re-send,
 * and also a stage's first sends (WorkflowObject.releaseNext), whose prompts live nowhere else until an
 * instance holds them. A re-sent call's record moves to the next dispatch number first: a repeated report
 * of the failed one is stale.
 */
import { classifyFailure, MAX_CALL_ATTEMPTS, MAX_CALL_EVACUATIONS } from "../core/call-retry";
import type { CallReport } from "./report-outbox";
import { instanceObjectName } from "./names";
import { groupBy } from "../core/group-by";
import type { WorkflowEvents } from "./workflow-events";
import { isLive as running, type CallRecord, type Redispatch, type WorkflowMeta, type WorkflowStore } from "./workflow-store";

/** Real milliseconds before a re-send the pool could not place (no healthy instance) is tried again. */
export const REDISPATCH_RETRY_MS = 2_000;
/** Real milliseconds without progress after which the workflow asks the instances whether they still hold its calls. */
const RECONCILE_AFTER_MS = 30_000;

export interface FailoverHost {
  env: Env;
  store: WorkflowStore;
  events: WorkflowEvents;
  meta(): WorkflowMeta | undefined;
  finish(meta: WorkflowMeta, status: "failed", error: { code: string; message: string }): Promise<void>;
  /** Records progress on the meta as stored now (the caller's copy may be stale after an await). */
  progressed(): void;
  alarmAt(ms: number): Promise<void>;
}

type Bound = Redispatch & { bound: NonNullable<Redispatch["bound"]> };


export class Failover {
  /** Re-sends under way in this object's life: a second trigger (a report, the alarm) leaves them alone. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly host: FailoverHost) {}

  /** A current report of a failed call (its dispatch number already checked). */
  async failed(meta: WorkflowMeta, rec: CallRecord, report: CallReport): Promise<void> {
    if (report.outcome.ok) return;
    const error = report.outcome.error;
    const kind = classifyFailure(error);
    // Every executed attempt that failed is recorded; a call handed back unrun was not an attempt.
    const failures = kind === "evacuated" ? rec.failures : [...rec.failures, { instanceId: report.instanceId, code: error.code, message: error.message }];
    const evacuations = rec.evacuations + (kind === "evacuated" ? 1 : 0);
    const exhausted = (kind === "retry" && failures.length >= MAX_CALL_ATTEMPTS) || (kind === "evacuated" && evacuations > MAX_CALL_EVACUATIONS);
    if (kind === "fatal" || exhausted || report.call === undefined || meta.status !== "running") {
      this.host.store.saveCall({ ...rec, failures, evacuations, enqueuedAt: report.enqueuedAt, admittedAt: report.admittedAt, finishedAt: report.finishedAt, error: error.message });
      this.host.events.finished(rec, report);
      if (meta.status !== "running") return;
      const tries = exhausted && kind === "retry" ? ` (attempt ${failures.length} of ${MAX_CALL_ATTEMPTS}; earlier: ${rec.failures.map((f) => `${f.code} on ${f.instanceId}`).join(", ")})` : "";
      await this.host.finish(meta, "failed", { code: error.code, message: `call ${rec.id} on ${report.instanceId}: ${error.message}${tries}` });
      return;
    }
    const dispatch = rec.dispatch + 1;
    this.host.store.saveCall({ ...rec, dispatch, failures, evacuations });
    const avoid = [...new Set([...failures.map((f) => f.instanceId), report.instanceId])];
    this.host.store.saveRedispatch({ call: { ...report.call, dispatch }, avoid, failedAtS: report.finishedAt });
    this.host.events.failed(report, kind === "evacuated");
    await this.resume();
  }

  /**
   * Sends every pending send on: a stage's calls just released (bound already) and re-sends (bound here
   * first). Calls bound to one instance go in one enqueue. One the pool cannot place yet waits for the alarm.
   */
  async resume(idleMs = 0): Promise<void> {
    const all = this.host.store.redispatches().filter((r) => !this.inFlight.has(r.call.id));
    if (idleMs >= RECONCILE_AFTER_MS) await this.reconcile(all.filter((r) => r.sentAtMs !== undefined && Date.now() - r.sentAtMs >= RECONCILE_AFTER_MS));
    const pending = all.filter((r) => r.sentAtMs === undefined);
    for (const r of pending) this.inFlight.add(r.call.id);
    try {
      const bound = await Promise.all(pending.map((r) => this.bind(r)));
      const byInstance = groupBy(bound.filter((r) => r !== undefined), (r) => r.bound.instanceId);
      await Promise.all([...byInstance.values()].map((group) => this.enqueue(group)));
    } finally {
      for (const r of pending) this.inFlight.delete(r.call.id);
    }
  }

  /** The entry with its instance, asking the coordinator when it has none yet; undefined when it must wait. */
  private async bind(r: Redispatch): Promise<Bound | undefined> {
    if (r.bound !== undefined) return { ...r, bound: r.bound };
    const meta = this.host.meta();
    if (!running(meta)) {
      this.host.store.dropRedispatch(r.call.id);
      return undefined;
    }
    try {
      const placed = await this.host.env.COORDINATOR.getByName(meta.pool).redispatch(r.call, r.avoid);
      if (!placed.ok) {
        await this.host.alarmAt(Date.now() + REDISPATCH_RETRY_MS);
        return undefined;
      }
      const bound = { ...r, bound: { instanceId: placed.instanceId, estimateS: placed.estimateS, queuePolicy: placed.queuePolicy } };
      this.host.store.saveRedispatch(bound);
      this.host.events.dispatched(r.call, placed, r.failedAtS ?? r.call.releasedAt);
      return bound;
    } catch (e) {
      return this.retryLater(r.call.id, e);
    }
  }

  private async enqueue(group: Bound[]): Promise<void> {
    const { env, store } = this.host;
    const first = group[0];
    const meta = this.host.meta();
    if (first === undefined || meta === undefined) return;
    const { instanceId, queuePolicy } = first.bound;
    // Still current? Ended meanwhile (the workflow, or this dispatch already ran after a restart): the pool's load forgets it.
    const live = group.filter((r) => {
      const rec = store.call(r.call.id);
      return running(meta) && rec !== undefined && rec.finishedAt === undefined && rec.dispatch === (r.call.dispatch ?? 0);
    });
    const dead = group.filter((r) => !live.includes(r));
    try {
      if (dead.length > 0) await env.COORDINATOR.getByName(meta.pool).callsChanged(instanceId, [], dead.map((r) => r.call.id));
      for (const r of dead) store.dropRedispatch(r.call.id);
      if (live.length === 0) return;
      for (const r of live) {
        const rec = store.call(r.call.id);
        if (rec !== undefined && rec.instanceId !== instanceId) store.saveCall({ ...rec, instanceId, estimateS: r.bound.estimateS });
      }
      // Idempotent at the instance (it skips a call id it holds), so a repeat after a restart does no harm.
      await env.GPU_INSTANCE.getByName(instanceObjectName(meta.pool, instanceId)).enqueue(live.map((r) => ({ call: r.call, estimateS: r.bound.estimateS })), queuePolicy);
      const sentAtMs = Date.now();
      for (const r of live) if (store.call(r.call.id)?.finishedAt === undefined) store.saveRedispatch({ ...r, sentAtMs });
      this.host.progressed();
    } catch (e) {
      await this.retryLater(first.call.id, e);
    }
  }

  /**
   * Calls sent long ago that the workflow still waits on, checked with their instances (which the check also
   * wakes: a woken instance re-arms its watchdog). One its instance no longer holds, queued, running or in its
   * outbox, was lost on the way or with a restart: it goes out again as a failed attempt.
   */
  private async reconcile(sent: Redispatch[]): Promise<void> {
    const meta = this.host.meta();
    if (!running(meta) || sent.length === 0) return;
    for (const [instanceId, group] of groupBy(sent, (r) => r.bound?.instanceId)) {
      if (instanceId === undefined) continue;
      const held = new Set(await this.host.env.GPU_INSTANCE.getByName(instanceObjectName(meta.pool, instanceId)).holds(group.map((r) => r.call.id)).catch(() => group.map((r) => r.call.id)));
      for (const r of group) {
        const rec = this.host.store.call(r.call.id);
        const now = this.host.meta();
        if (held.has(r.call.id) || rec === undefined || rec.finishedAt !== undefined || rec.dispatch !== (r.call.dispatch ?? 0) || !running(now)) continue;
        const error = { code: "call_lost", message: `its instance ${instanceId} no longer held it` };
        await this.failed(now, rec, { callId: rec.id, workflowId: r.call.workflowId, dispatch: rec.dispatch, instanceId, enqueuedAt: r.call.releasedAt, admittedAt: r.call.releasedAt, finishedAt: r.call.releasedAt, laxityS: 0, outcome: { ok: false, error }, call: r.call });
      }
    }
  }

  /** An RPC that failed (an object restarting): the entry stays, and the alarm tries again. */
  private async retryLater(callId: string, e: unknown): Promise<undefined> {
    console.error(`sending call ${callId} failed (retried): ${e instanceof Error ? e.message : String(e)}`);
    await this.host.alarmAt(Date.now() + REDISPATCH_RETRY_MS);
    return undefined;
  }
}
