/**
 * A WorkflowObject's failed calls (core/call-retry): a failure the server caused goes to another
 * instance with its original budget and deadline, at most MAX_CALL_ATTEMPTS executions in all; a call
 * handed back unrun (its instance drained or turned unhealthy) goes elsewhere without spending an
 * attempt; a request the server refused as such fails the workflow with that reason.
 *
 * Each re-send is persisted before any RPC (table `redispatch`), with the instance once the coordinator
 * has bound it, so a restart in between resumes it from the alarm instead of losing or doubling it. The
 * call's record moves to the next dispatch number first: a repeated report of the failed one is stale.
 */
import { classifyFailure, MAX_CALL_ATTEMPTS, MAX_CALL_EVACUATIONS } from "../core/call-retry";
import type { CallReport } from "./report-outbox";
import { instanceObjectName } from "./names";
import type { CallRecord, Redispatch, WorkflowMeta, WorkflowStore } from "./workflow-store";

/** Real milliseconds before a re-send the pool could not place (no healthy instance) is tried again. */
export const REDISPATCH_RETRY_MS = 2_000;

export interface FailoverHost {
  env: Env;
  store: WorkflowStore;
  meta(): WorkflowMeta | undefined;
  finish(meta: WorkflowMeta, status: "failed", error: { code: string; message: string }): Promise<void>;
  /** Records progress on the meta as stored now (the caller's copy may be stale after an await). */
  progressed(): void;
  alarmAt(ms: number): Promise<void>;
}

const running = (m: WorkflowMeta | undefined): m is WorkflowMeta => m !== undefined && (m.status === "running" || m.status === "queued");

export class Failover {
  /** Re-sends under way in this object's life: a second trigger (a report, the alarm) leaves them alone. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly host: FailoverHost) {}

  /** A current report of a failed call (its dispatch number already checked). */
  async failed(meta: WorkflowMeta, rec: CallRecord, report: CallReport): Promise<void> {
    if (report.outcome.ok) return;
    const error = report.outcome.error;
    const kind = classifyFailure(error);
    const failures = kind === "retry" ? [...rec.failures, { instanceId: report.instanceId, code: error.code, message: error.message }] : rec.failures;
    const evacuations = rec.evacuations + (kind === "evacuated" ? 1 : 0);
    const exhausted = (kind === "retry" && failures.length >= MAX_CALL_ATTEMPTS) || (kind === "evacuated" && evacuations > MAX_CALL_EVACUATIONS);
    if (kind === "fatal" || exhausted || report.call === undefined || meta.status !== "running") {
      this.host.store.saveCall({ ...rec, failures, evacuations, enqueuedAt: report.enqueuedAt, admittedAt: report.admittedAt, finishedAt: report.finishedAt, error: error.message });
      if (meta.status !== "running") return;
      const tries = exhausted && kind === "retry" ? ` (attempt ${failures.length} of ${MAX_CALL_ATTEMPTS}; earlier: ${rec.failures.map((f) => `${f.code} on ${f.instanceId}`).join(", ")})` : "";
      await this.host.finish(meta, "failed", { code: error.code, message: `call ${rec.id} on ${report.instanceId}: ${error.message}${tries}` });
      return;
    }
    const dispatch = rec.dispatch + 1;
    this.host.store.saveCall({ ...rec, dispatch, failures, evacuations });
    this.host.store.saveRedispatch({ call: { ...report.call, dispatch }, failedOn: report.instanceId });
    await this.resume();
  }

  /** Sends every pending re-send on; one the pool cannot place yet is retried from the alarm. */
  async resume(): Promise<void> {
    const pending = this.host.store.redispatches().filter((r) => !this.inFlight.has(r.call.id));
    await Promise.all(pending.map((r) => this.send(r)));
  }

  private async send(r: Redispatch): Promise<void> {
    const { env, store } = this.host;
    const id = r.call.id;
    this.inFlight.add(id);
    try {
      const meta = this.host.meta();
      if (!running(meta)) {
        store.dropRedispatch(id);
        return;
      }
      const coordinator = env.COORDINATOR.getByName(meta.pool);
      let bound = r.bound;
      if (bound === undefined) {
        const placed = await coordinator.redispatch(r.call, r.failedOn);
        if (!placed.ok) {
          await this.host.alarmAt(Date.now() + REDISPATCH_RETRY_MS);
          return;
        }
        bound = { instanceId: placed.instanceId, estimateS: placed.estimateS, queuePolicy: placed.queuePolicy };
        store.saveRedispatch({ ...r, bound });
      }
      const rec = store.call(id);
      const now = this.host.meta();
      // Ended meanwhile (the workflow, or this dispatch already ran after a restart): the pool's load forgets it.
      if (!running(now) || rec === undefined || rec.finishedAt !== undefined || rec.dispatch !== (r.call.dispatch ?? 0)) {
        store.dropRedispatch(id);
        await coordinator.callsChanged(bound.instanceId, [], [id]);
        return;
      }
      store.saveCall({ ...rec, instanceId: bound.instanceId, estimateS: bound.estimateS });
      await env.GPU_INSTANCE.getByName(instanceObjectName(now.pool, bound.instanceId)).enqueue([{ call: r.call, estimateS: bound.estimateS }], bound.queuePolicy);
      store.dropRedispatch(id);
      this.host.progressed();
    } catch (e) {
      // An RPC that failed (an object restarting): the entry stays, and the alarm tries again.
      console.error(`re-sending call ${id} failed (retried): ${e instanceof Error ? e.message : String(e)}`);
      await this.host.alarmAt(Date.now() + REDISPATCH_RETRY_MS);
    } finally {
      this.inFlight.delete(id);
    }
  }
}
