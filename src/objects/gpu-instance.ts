import { DurableObject } from "cloudflare:workers";
import { canAdmit, kvClaim, type AdmissionLoad } from "../core/admission";
import { InstanceQueue, type QueuedCall } from "../core/instance-queue";
import type { InstanceRecord } from "../core/pool";
import { QUEUE_POLICIES, type QueueName } from "../core/policies";
import type { ReleasedCall } from "../core/workflow-run";
import { streamCompletion, upstreamRequest, type UpstreamResult } from "../upstream/vllm-client";
import { upstreamFetcher } from "../upstream/transport";
import { classifyFailure } from "../core/call-retry";
import { admissions, logAdmission, type Admission } from "./admission-log";
import { CallStreams } from "./call-streams";
import { LoadReporter } from "./load-report";
import { ReportOutbox, type CallReport } from "./report-outbox";
import { ConfigSchema, MIGRATIONS, QueuedSchema, RunningSchema, type Config, type OutstandingCall, type Running } from "./gpu-instance-store";
import { migrate } from "./sqlite";
import { rearmStoredAlarm } from "./alarm";

export type { CallReport } from "./report-outbox";
export type { OutstandingCall } from "./gpu-instance-store";

/** The watchdog alarm's period while the instance holds work (real time). */
const WATCHDOG_MS = 5_000;

/**
 * One per vLLM server: the urgency queue in front of it (persisted), admission while the running
 * calls' KV claims leave room (core/admission: vLLM's own FCFS queue stays short, our order decides), the
 * streamed forward, and the completion report to the workflow (through a persisted outbox) and the
 * coordinator. A failed call goes back to its workflow whole, which sends it elsewhere (core/call-retry).
 * While the instance drains or its server is unhealthy it hands its queue back the same way and takes
 * no new calls. One alarm, armed while work or reports are held, is the watchdog: it fails calls admitted
 * longer than the request timeout (a server that hangs), re-sends undelivered reports, and re-admits.
 * A call's text can be followed live (subscribe; call-streams.ts) by the OpenAI-compatible endpoint.
 */
export class GpuInstanceObject extends DurableObject<Env> {
  private queue = new InstanceQueue(QUEUE_POLICIES.fcfs);
  private running = new Map<string, Running>();
  private config: Config | undefined;
  private readonly loadReport = new LoadReporter((started, finished, services, outcomes) => {
    const cfg = this.config;
    return cfg === undefined ? undefined : this.env.COORDINATOR.getByName(cfg.pool).callsChanged(cfg.record.id, started, finished, services, outcomes);
  });
  private readonly streams = new CallStreams();
  private readonly outbox: ReportOutbox;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage.sql, MIGRATIONS);
    this.outbox = new ReportOutbox(ctx.storage.sql, (r) => env.WORKFLOW.getByName(r.workflowId).onCallDone(r));
    ctx.blockConcurrencyWhile(async () => {
      const row = ctx.storage.sql.exec<{ json: string }>("SELECT json FROM config WHERE key = 'config'").toArray()[0];
      this.config = row === undefined ? undefined : ConfigSchema.parse(JSON.parse(row.json));
      this.queue = new InstanceQueue(QUEUE_POLICIES[this.config?.queuePolicy ?? "fcfs"]);
      for (const r of ctx.storage.sql.exec<{ json: string }>("SELECT json FROM queue").toArray()) this.queue.restore(QueuedSchema.parse(JSON.parse(r.json)));
      // A new object (a restart, a deploy) has no forward alive: the calls it finds running lost their
      // streams (vLLM aborts a request whose client went away, unless it had finished). Each goes back
      // to its workflow as a failed attempt, through the outbox, which the alarm sends at once.
      const orphans = ctx.storage.sql.exec<{ json: string }>("SELECT json FROM running").toArray().map((r) => RunningSchema.parse(JSON.parse(r.json)));
      ctx.storage.sql.exec("DELETE FROM running");
      for (const run of orphans) this.outbox.put(this.ended(run, { ok: false, error: { code: "instance_restarted", message: "the instance restarted while the call ran; its stream was lost" } }, true));
      // Queued calls too: after a restart nothing else may come to admit them.
      await rearmStoredAlarm(ctx.storage, orphans.length > 0 || this.outbox.size > 0 || this.queue.size > 0 ? Date.now() : undefined);
    });
  }

  /** `serving` false (the server is unhealthy) or a draining record: the queue goes back, nothing new is taken. */
  async configure(record: InstanceRecord, pool: string, queuePolicy: QueueName, serving = true): Promise<void> {
    this.config = { record, pool, queuePolicy, serving };
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO config (key, json) VALUES ('config', ?)", JSON.stringify(this.config));
    if (this.queue.policy.name !== queuePolicy) this.rekey(queuePolicy);
    if (!this.accepting()) {
      const evacuated = [...this.queue.entries()].flatMap((q) => this.dequeue(q.call.id) ?? []);
      await Promise.all(evacuated.map((q) => this.evacuate(q)));
    }
    this.pump();
    await this.arm();
  }

  /** Queues calls bound to this instance (a stage's share), then admits what capacity allows. */
  async enqueue(items: { call: ReleasedCall; estimateS: number }[], queuePolicy: QueueName): Promise<{ queued: number }> {
    if (queuePolicy !== this.queue.policy.name) this.rekey(queuePolicy);
    const now = this.now();
    if (!this.accepting()) {
      // Bound here before the coordinator learnt the server was down: straight back, never run.
      await Promise.all(items.map(({ call, estimateS }) => this.evacuate({ call, estimateS, enqueuedAt: now, key: 0, seq: 0 })));
      return { queued: this.queue.size };
    }
    for (const { call, estimateS } of items) {
      if (this.queue.has(call.id) || this.running.has(call.id)) continue;
      // Real calls keep their text from the start, for a caller that subscribes late; replayed ones only when subscribed.
      if (call.prompt !== undefined || call.messages !== undefined) this.streams.open(call.id, call.dispatch ?? 0);
      const entry = this.queue.push(call, estimateS, now);
      this.ctx.storage.sql.exec("INSERT INTO queue (call_id, json) VALUES (?, ?)", call.id, JSON.stringify(entry));
    }
    this.pump();
    await this.arm();
    return { queued: this.queue.size };
  }

  /** Removes queued calls (a cancelled workflow); running ones finish. Returns what was removed. */
  cancel(callIds: string[]): string[] {
    const removed: string[] = [];
    for (const id of callIds) {
      if (this.dequeue(id) === undefined) continue;
      this.streams.end(id, { error: { code: "cancelled", message: "the call's workflow was cancelled" } });
      removed.push(id);
    }
    return removed;
  }

  /** The call's text as it streams from vLLM, as newline-delimited JSON events (see call-streams.ts). */
  subscribe(callId: string, dispatch = 0): ReadableStream<Uint8Array> {
    return this.streams.subscribe(callId, this.queue.has(callId) || this.running.has(callId), dispatch);
  }

  /**
   * Which of these calls the instance still holds (queued, running, or its report not yet delivered). A workflow
   * without progress asks; the ask also wakes an instance whose watchdog alarm a local restart lost.
   */
  async holds(callIds: string[]): Promise<string[]> {
    const reported = this.outbox.callIds();
    const at = await this.ctx.storage.getAlarm();
    if (this.queue.size + this.running.size + reported.size > 0 && (at === null || at < Date.now() - WATCHDOG_MS)) await this.ctx.storage.setAlarm(Date.now());
    return callIds.filter((id) => this.queue.has(id) || this.running.has(id) || reported.has(id));
  }

  stats(): { queued: number; running: number; queuePolicy: string; admissions: Admission[] } {
    return { queued: this.queue.size, running: this.running.size, queuePolicy: this.queue.policy.name, admissions: admissions(this.ctx.storage.sql) };
  }

  outstanding(): OutstandingCall[] {
    return [
      ...[...this.queue.entries()].map((q) => ({ callId: q.call.id, estimateS: q.estimateS, startedAt: null })),
      ...[...this.running.values()].map((r) => ({ callId: r.call.id, estimateS: r.estimateS, startedAt: r.admittedAt })),
    ];
  }

  /** Idempotent: whatever fired it, it looks at the calls and reports held now and acts on what is overdue. */
  override async alarm(): Promise<void> {
    const cfg = this.config;
    const overdue = cfg === undefined ? [] : [...this.running.values()].filter((r) => Date.now() - r.admittedAtMs > cfg.record.requestTimeoutMs);
    for (const run of overdue) {
      await this.complete(run, { ok: false, error: { code: "upstream_timeout", message: `no answer within ${cfg?.record.requestTimeoutMs ?? 0} ms` } });
    }
    await this.outbox.flush();
    this.pump();
    await this.arm();
  }

  private async arm(): Promise<void> {
    if (this.queue.size + this.running.size === 0 && this.outbox.size === 0) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_MS);
  }

  /** Takes a queued call out of the queue, in memory and in storage. */
  private dequeue(callId: string): QueuedCall | undefined {
    const q = this.queue.remove(callId);
    if (q !== undefined) this.ctx.storage.sql.exec("DELETE FROM queue WHERE call_id = ?", callId);
    return q;
  }

  private accepting(): boolean {
    return this.config === undefined || (this.config.serving && this.config.record.state === "active");
  }

  /** A queued call that never ran goes back to its workflow for another instance (no attempt spent). */
  private async evacuate(q: QueuedCall): Promise<void> {
    this.streams.end(q.call.id, { error: { code: "evacuated", message: "the call's instance stopped taking work; it was sent elsewhere" } });
    const now = this.now();
    const run = { ...q, admittedAt: now, admittedAtMs: Date.now(), laxityS: q.call.deadlineS - now - q.estimateS };
    await this.outbox.send(this.ended(run, { ok: false, error: { code: "evacuated", message: "the instance drained or turned unhealthy before running the call" } }, false));
  }

  private now(): number {
    return (Date.now() / 1000) * (this.config?.record.timeScale ?? 1);
  }

  private rekey(name: QueueName): void {
    const entries = [...this.queue.entries()];
    this.queue = new InstanceQueue(QUEUE_POLICIES[name]);
    for (const e of entries) {
      const entry = { ...e, key: this.queue.policy.key(e.call, e.estimateS, e.enqueuedAt) };
      this.queue.restore(entry);
      this.ctx.storage.sql.exec("UPDATE queue SET json = ? WHERE call_id = ?", JSON.stringify(entry), e.call.id);
    }
  }

  private pump(): void {
    const cfg = this.config;
    if (cfg === undefined || !this.accepting()) return;
    const load: AdmissionLoad = { calls: 0, tokens: 0 };
    for (const r of this.running.values()) {
      load.calls += 1;
      load.tokens += kvClaim(r.call);
    }
    for (let next = this.queue.peek(); next !== undefined && canAdmit(load, next.call, cfg.record); next = this.queue.peek()) {
      this.queue.pop();
      this.admit(next, cfg);
      load.calls += 1;
      load.tokens += kvClaim(next.call);
    }
  }

  private admit(q: QueuedCall, cfg: Config): void {
    const now = this.now();
    const run: Running = { ...q, admittedAt: now, admittedAtMs: Date.now(), laxityS: q.call.deadlineS - now - q.estimateS, concurrency: this.running.size + 1 };
    this.running.set(q.call.id, run);
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM queue WHERE call_id = ?", q.call.id);
    sql.exec("INSERT OR REPLACE INTO running (call_id, json) VALUES (?, ?)", q.call.id, JSON.stringify(run));
    logAdmission(sql, { callId: q.call.id, enqueuedAt: q.enqueuedAt, admittedAt: now, laxityS: run.laxityS, key: q.key });
    this.loadReport.started(q.call.id, now);
    this.ctx.waitUntil(this.forward(run, cfg));
  }

  private async forward(run: Running, cfg: Config): Promise<void> {
    const outcome = await streamCompletion(upstreamFetcher(this.env, cfg.record), {
      baseUrl: cfg.record.url,
      model: cfg.record.model,
      ...upstreamRequest(run.call),
      timeoutMs: cfg.record.requestTimeoutMs,
      onText: (delta) => this.streams.delta(run.call.id, delta),
    });
    await this.complete(run, outcome);
  }

  /** Reports a call's end once: a late answer after the watchdog gave up on it is dropped. */
  private async complete(run: Running, outcome: UpstreamResult): Promise<void> {
    if (!this.running.delete(run.call.id)) return;
    this.ctx.storage.sql.exec("DELETE FROM running WHERE call_id = ?", run.call.id);
    // A failed call's text is not final: it runs again elsewhere, and a subscriber follows it there.
    this.streams.end(run.call.id, outcome.ok ? { done: true, usage: { promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens }, finishReason: outcome.finishReason } : { error: outcome.error });
    this.pump();
    await this.outbox.send(this.ended(run, outcome, true));
  }

  /** A call's end, told to the coordinator (load, calibration, health); answers the workflow's report. */
  private ended(run: Running, outcome: UpstreamResult | { ok: false; error: { code: string; message: string } }, ran: boolean): CallReport {
    const finishedAt = this.now();
    const report: CallReport = {
      callId: run.call.id,
      workflowId: run.call.workflowId,
      dispatch: run.call.dispatch ?? 0,
      instanceId: this.config?.record.id ?? "",
      enqueuedAt: run.enqueuedAt,
      admittedAt: run.admittedAt,
      finishedAt,
      laxityS: run.laxityS,
      outcome,
      ...(outcome.ok ? {} : { call: run.call }),
    };
    const fault = !outcome.ok && ran && classifyFailure(outcome.error) === "retry" ? `${outcome.error.code}: ${outcome.error.message}` : null;
    this.loadReport.finished(
      outcome.ok ? { callId: run.call.id, ok: true } : { callId: run.call.id, ok: false, fault },
      outcome.ok ? { inputTokens: outcome.promptTokens, outputTokens: outcome.completionTokens, serviceS: finishedAt - run.admittedAt, concurrency: run.concurrency ?? 1 } : undefined,
    );
    return report;
  }
}

