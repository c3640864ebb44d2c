import { DurableObject } from "cloudflare:workers";
import type { DagRequest } from "../core/dag";
import { completeCall, startWorkflow } from "../core/workflow-run";
import { WorkflowSpecSchema, type WorkflowSpec } from "../core/workflow";
import type { CallReport } from "./gpu-instance";
import { instanceObjectName } from "./names";
import { err, ok, type Result } from "./result";
import { advanceText2Sql } from "./text2sql-driver";
import { groupBy } from "../core/group-by";
import { isLive, MAX_OUTPUT_CHARS, WorkflowStore, type CallRecord, type Text2SqlMeta, type WorkflowMeta } from "./workflow-store";
import { traceOwed, writeTraceIfOwed } from "./workflow-trace";
import { Failover } from "./workflow-failover";
import { releaseStage } from "./workflow-release";
import { rearmStoredAlarm } from "./alarm";
import { WorkflowEvents } from "./workflow-events";

/** Default bound on a running workflow without progress (real seconds; env WORKFLOW_STALL_S overrides). */
const DEFAULT_STALL_S = 1800;
/**
 * A running workflow's alarm fires at least this often (real ms), so what a restart interrupted (a release,
 * a send) resumes within it even when no report comes; each tick reads storage and does nothing if all is well.
 */
const TICK_MS = 15_000;

export type { CallRecord, WorkflowMeta } from "./workflow-store";

export interface StartInput {
  id: string;
  spec: WorkflowSpec;
  sloS: number;
  arrivalS: number;
  pool: string;
  tenant: string;
  bestEffort?: boolean;
  /** The SLO asked for, when the workflow is scheduled with another (best-effort). */
  requestedSloS?: number;
  dag?: DagRequest;
  text2sql?: Text2SqlMeta;
}

/**
 * One per workflow: its DAG state, stage releases (one coordinator RPC each), the calls' records,
 * and completions, recognised by call id and dispatch number so a repeated or stale report changes
 * nothing. A failed call is sent elsewhere (workflow-failover.ts). A text2sql workflow's next stage
 * depends on what the last one wrote and on running its SQL: the alarm drives that (see
 * text2sql-driver.ts), so an instance's completion report never waits on a database. The one alarm
 * also ticks while the workflow runs, resuming what a restart interrupted (a stage release, a send),
 * writes the trace of an ended workflow, and is the watchdog: a workflow without progress for
 * WORKFLOW_STALL_S fails with the reason instead of hanging.
 */
export class WorkflowObject extends DurableObject<Env> {
  private readonly store: WorkflowStore;
  private readonly failover: Failover;
  private readonly progress: WorkflowEvents;
  /** A stage release under way in this object's life: the tick leaves it alone. */
  private releasing = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new WorkflowStore(ctx.storage.sql);
    this.progress = new WorkflowEvents(this.store);
    // A running workflow always has its tick; an ended one only what it still owes (its trace).
    const live = this.meta();
    ctx.blockConcurrencyWhile(() => rearmStoredAlarm(ctx.storage, isLive(live) ? Date.now() + TICK_MS : undefined));
    this.failover = new Failover({
      env,
      store: this.store,
      events: this.progress,
      meta: () => this.meta(),
      finish: (m, status, error) => this.finish(m, status, error),
      progressed: () => {
        const m = this.meta();
        if (m !== undefined) this.saveMeta({ ...m, progressAtMs: Date.now() });
      },
      alarmAt: (ms) => this.alarmAt(ms),
    });
  }

  async start(input: StartInput): Promise<Result<{ id: string; status: string }>> {
    const existing = this.meta();
    if (existing !== undefined) return ok({ id: existing.state.id, status: existing.status });
    const spec = WorkflowSpecSchema.parse(input.spec);
    const meta: WorkflowMeta = {
      state: startWorkflow(input.id, spec, input.arrivalS, input.sloS), status: "queued", pool: input.pool, tenant: input.tenant, bestEffort: input.bestEffort ?? false, createdAtMs: Date.now(), progressAtMs: Date.now(),
      ...(input.requestedSloS === undefined || input.requestedSloS === input.sloS ? {} : { requestedSloS: input.requestedSloS }),
      ...(input.dag === undefined ? {} : { dag: input.dag }),
      ...(input.text2sql === undefined ? {} : { text2sql: input.text2sql }),
    };
    this.saveMeta(meta);
    await this.alarmAt(Date.now() + TICK_MS);
    await this.releaseNext(meta);
    return ok({ id: input.id, status: meta.status });
  }

  async onCallDone(report: CallReport): Promise<void> {
    const meta = this.meta();
    const rec = this.store.call(report.callId);
    if (meta === undefined || rec === undefined || rec.finishedAt !== undefined || report.dispatch !== rec.dispatch) return;
    const outcome = report.outcome;
    if (!outcome.ok) {
      await this.failover.failed(meta, rec, report);
      return;
    }
    meta.progressAtMs = Date.now();
    this.store.dropRedispatch(report.callId);
    this.store.saveCall({
      ...rec,
      enqueuedAt: report.enqueuedAt,
      admittedAt: report.admittedAt,
      finishedAt: report.finishedAt,
      laxityS: report.laxityS,
      completionTokens: outcome.completionTokens,
      output: outcome.text.slice(0, MAX_OUTPUT_CHARS),
    });
    this.progress.finished(rec, report);
    if (meta.status !== "running") return;
    const result = completeCall(meta.state, report.callId, report.finishedAt);
    if (meta.text2sql !== undefined && (result === "stage-done" || result === "workflow-done")) {
      // Its last known stage is not its end: the run decides what follows once the SQL has run.
      delete meta.state.finishedAt;
      this.saveMeta(meta);
      await this.alarmAt(Date.now());
      return;
    }
    this.saveMeta(meta);
    if (result === "stage-done") await this.releaseNext(meta);
    else if (result === "workflow-done") await this.finish(meta, "succeeded");
  }

  /**
   * Idempotent, from what storage says: it fails a stalled workflow, resumes re-sends, advances a running
   * text2sql workflow whose stage has finished, writes an ended workflow's trace to D1 once (see
   * workflow-trace.ts), and re-arms itself while the workflow runs.
   */
  override async alarm(): Promise<void> {
    let meta = this.meta();
    if (isLive(meta)) {
      const idleMs = Date.now() - (meta.progressAtMs ?? meta.createdAtMs);
      if (idleMs >= this.stallMs()) {
        const waiting = this.calls().filter((c) => c.finishedAt === undefined).map((c) => `${c.id} on ${c.instanceId}`);
        const on = meta.waiting ?? (waiting.join(", ") || "no call");
        await this.finish(meta, "failed", { code: "stalled", message: `no progress for ${Math.round(idleMs / 1000)} s (bound ${this.stallMs() / 1000} s); waiting on ${on}` });
      } else if (meta.waiting !== undefined || this.releaseOwed(meta, idleMs)) await this.releaseNext(meta);
      else await this.failover.resume(idleMs);
    }
    meta = this.meta();
    if (meta?.text2sql !== undefined && meta.status === "running" && meta.state.pending.length === 0) {
      await advanceText2Sql(
        { env: this.env, store: this.store, events: this.progress, release: (m) => this.releaseNext(m), finish: (m, status, error) => this.finish(m, status, error) },
        meta,
        meta.text2sql,
      );
    }
    await writeTraceIfOwed(this.env, this.ctx.storage.sql, this.meta(), () => this.calls());
    const after = this.meta();
    if (isLive(after)) await this.alarmAt(Math.min((after.progressAtMs ?? after.createdAtMs) + this.stallMs(), Date.now() + TICK_MS));
  }

  /** A release a restart interrupted leaves a finished stage, nothing pending and nothing being sent. */
  private releaseOwed(meta: WorkflowMeta, idleMs: number): boolean {
    const { pending, stageIndex, spec } = meta.state;
    return meta.text2sql === undefined && !this.releasing && idleMs >= TICK_MS && pending.length === 0 && stageIndex + 1 < spec.stages.length && this.store.redispatches().every((r) => r.sentAtMs !== undefined);
  }

  /** The one alarm serves every timer: it is moved earlier, never later (the handler re-arms what remains). */
  private async alarmAt(ms: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > ms) await this.ctx.storage.setAlarm(ms);
  }

  private stallMs(): number {
    const s = Number(this.env.WORKFLOW_STALL_S);
    return (Number.isFinite(s) && s > 0 ? s : DEFAULT_STALL_S) * 1000;
  }

  async cancel(tenant: string): Promise<Result<{ status: string }>> {
    const meta = this.meta();
    if (meta === undefined || meta.tenant !== tenant) return err("not_found", "no such workflow");
    if (meta.status === "succeeded" || meta.status === "failed" || meta.status === "cancelled") return err("conflict", `workflow already ${meta.status}`);
    await this.finish(meta, "cancelled");
    return ok({ status: "cancelled" });
  }

  /** Where a call is now, for a caller following its text across a failover (api/call-events.ts). */
  callPlace(tenant: string, callId: string): Result<{ status: string; dispatch: number; instanceId: string | null }> {
    const meta = this.meta();
    const rec = this.store.call(callId);
    if (meta === undefined || meta.tenant !== tenant || rec === undefined) return err("not_found", "no such call");
    const resend = this.store.redispatches().find((r) => r.call.id === callId && r.sentAtMs === undefined);
    return ok({ status: meta.status, dispatch: rec.dispatch, instanceId: resend === undefined ? rec.instanceId : (resend.bound?.instanceId ?? null) });
  }

  /** Its progress events after `afterSeq` as Server-Sent Events (workflow-events.ts); null: it ended at or before that event. */
  events(tenant: string, afterSeq: number, heartbeatMs?: number): Result<{ stream: ReadableStream<Uint8Array> | null }> {
    const meta = this.meta();
    return meta === undefined || meta.tenant !== tenant ? err("not_found", "no such workflow") : ok({ stream: this.progress.open(meta, afterSeq, heartbeatMs) });
  }

  /** Another tenant's workflow answers exactly as a missing one. */
  view(tenant: string): Result<{ meta: WorkflowMeta; calls: CallRecord[] }> {
    const meta = this.meta();
    if (meta === undefined || meta.tenant !== tenant) return err("not_found", "no such workflow");
    return ok({ meta, calls: this.calls() });
  }

  private async releaseNext(meta: WorkflowMeta): Promise<void> {
    this.releasing = true;
    try {
      await releaseStage({ env: this.env, store: this.store, events: this.progress, failover: this.failover, meta: () => this.meta(), finish: (m, status, error) => this.finish(m, status, error), alarmAt: (ms) => this.alarmAt(ms) }, meta);
    } finally {
      this.releasing = false;
    }
  }

  /** Ends the workflow exactly once; queued calls leave their instances and the pool's load. */
  private async finish(meta: WorkflowMeta, status: "succeeded" | "failed" | "cancelled", error?: { code: string; message: string }): Promise<void> {
    meta.status = status;
    if (error !== undefined) meta.error = error;
    this.saveMeta(meta);
    this.progress.done(meta);
    // The trace goes to D1 from the alarm, so whoever ended the workflow never waits on D1.
    traceOwed(this.ctx.storage.sql);
    await this.alarmAt(Date.now());
    if (status === "succeeded") return;
    const byInstance = groupBy(this.calls().filter((c) => c.finishedAt === undefined), (c) => c.instanceId);
    const coordinator = this.env.COORDINATOR.getByName(meta.pool);
    await Promise.all(
      [...byInstance].map(async ([instanceId, open]) => {
        const removed = await this.env.GPU_INSTANCE.getByName(instanceObjectName(meta.pool, instanceId)).cancel(open.map((c) => c.id));
        await coordinator.callsChanged(instanceId, [], removed);
      }),
    );
  }

  private meta(): WorkflowMeta | undefined {
    return this.store.meta();
  }

  private saveMeta(meta: WorkflowMeta): void {
    this.store.saveMeta(meta);
  }

  private calls(): CallRecord[] {
    return this.store.calls();
  }
}
