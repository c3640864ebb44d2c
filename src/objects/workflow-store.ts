/**
 * A WorkflowObject's SQLite storage: the meta record (state, status, the kind's own data) and one row per
 * call. Kept apart from the object so the object reads as what it does, not how rows are spelled.
 */
import { QueueNameSchema } from "../core/policies";
import { z } from "zod";
import { DagRequestSchema } from "../core/dag";
import { Text2SqlRunSchema } from "../core/text2sql/run-state";
import { WorkflowEventDataSchema, type WorkflowEvent, type WorkflowEventData } from "../core/workflow-events";
import { ReleasedCallSchema, WorkflowStateSchema } from "../core/workflow-run";
import { hasSchema, migrate } from "./sqlite";

const MIGRATIONS = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE calls (call_id TEXT PRIMARY KEY, stage INTEGER NOT NULL, json TEXT NOT NULL)`,
  // v2: calls on their way to another instance (workflow-failover.ts).
  `CREATE TABLE redispatch (call_id TEXT PRIMARY KEY, json TEXT NOT NULL)`,
  // v3: progress events, each written with the state change it tells of (workflow-events.ts).
  `CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, json TEXT NOT NULL)`,
];

export const StatusSchema = z.enum(["queued", "running", "succeeded", "failed", "cancelled"]);

/** A text2sql workflow's run and what the object needs to drive it. */
export const Text2SqlMetaSchema = z.object({
  tenant: z.string(),
  run: Text2SqlRunSchema,
  /** The last stage whose outputs the run has consumed; a finished stage above it is still to be fed. */
  consumed: z.number().int(),
  /** Each batch of queries the workflow ran, wall-clock milliseconds (SQL runs outside the pool's clock). */
  executions: z.array(z.object({ phase: z.string(), queries: z.number().int(), elapsedMs: z.number() })),
});
export type Text2SqlMeta = z.infer<typeof Text2SqlMetaSchema>;

const MetaSchema = z.object({
  state: WorkflowStateSchema,
  status: StatusSchema,
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  pool: z.string(),
  /** The owning tenant's id: every read and cancel names it, and another tenant's id reads as missing. */
  tenant: z.string().default("default"),
  /** Admitted past the pool's prediction (the tenant allows best-effort): its deadline is loosened. */
  bestEffort: z.boolean().default(false),
  /** The SLO the client asked for, when the workflow is scheduled with a looser one (best-effort). */
  requestedSloS: z.number().optional(),
  createdAtMs: z.number(),
  /** Why the next stage is not released yet (no healthy instance): the alarm tries again. */
  waiting: z.string().optional(),
  /** Real milliseconds of the last progress (a stage released, a call ended or re-sent): the watchdog's reference. */
  progressAtMs: z.number().optional(),
  /** A custom DAG workflow's request (stored as sent; validateDag rebuilds its plan). */
  dag: DagRequestSchema.optional(),
  text2sql: Text2SqlMetaSchema.optional(),
});
export type WorkflowMeta = z.infer<typeof MetaSchema>;

const CallRecordSchema = z.object({
  id: z.string(),
  stageIndex: z.number(),
  step: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  instanceId: z.string(),
  estimateS: z.number(),
  budgetS: z.number(),
  deadlineS: z.number(),
  alphaVersion: z.number(),
  releasedAt: z.number(),
  enqueuedAt: z.number().optional(),
  admittedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  laxityS: z.number().optional(),
  completionTokens: z.number().optional(),
  /** What the model wrote, cut at MAX_OUTPUT_CHARS: later stages' prompts and the caller read it. */
  output: z.string().optional(),
  error: z.string().optional(),
  /** Which dispatch of the call is current (a report of another is stale), and the failed attempts before it. */
  dispatch: z.number().int().nonnegative().default(0),
  failures: z.array(z.object({ instanceId: z.string(), code: z.string(), message: z.string() })).default([]),
  /** Times it was handed back unrun by a draining or unhealthy instance. */
  evacuations: z.number().int().nonnegative().default(0),
});
export type CallRecord = z.infer<typeof CallRecordSchema>;

/** A call to send (bound to its instance once the coordinator placed it, so a retry after a restart enqueues it there), then sent. */
export const RedispatchSchema = z.object({
  call: ReleasedCallSchema,
  /** The instances the call failed on or was handed back by, passed over while another can take it. */
  avoid: z.array(z.string()).default([]),
  bound: z.object({ instanceId: z.string(), estimateS: z.number(), queuePolicy: QueueNameSchema }).optional(),
  /** Real ms when its instance took it; kept until the call ends, so a call its instance lost can go out again. */
  sentAtMs: z.number().optional(),
  /** Pool-clock seconds of the failure that sent it again: its laxity at re-dispatch is measured from there. */
  failedAtS: z.number().optional(),
});
export type Redispatch = z.infer<typeof RedispatchSchema>;

/** One call's row stays far below a Durable Object's 2 MB row limit even with many calls per stage. */
export const MAX_OUTPUT_CHARS = 64_000;

/**
 * The schema is created by the first write, not by the constructor: a read of a workflow id that was never
 * started (a client's typo, or someone guessing) must not leave an object with storage behind.
 */
export class WorkflowStore {
  private migrated: boolean;

  constructor(private readonly sql: SqlStorage) {
    this.migrated = hasSchema(sql);
    if (this.migrated) migrate(sql, MIGRATIONS);
  }

  private ensureSchema(): void {
    if (this.migrated) return;
    migrate(this.sql, MIGRATIONS);
    this.migrated = true;
  }

  meta(): WorkflowMeta | undefined {
    if (!this.migrated) return undefined;
    const row = this.sql.exec<{ json: string }>("SELECT json FROM meta WHERE key = 'meta'").toArray()[0];
    return row === undefined ? undefined : MetaSchema.parse(JSON.parse(row.json));
  }

  saveMeta(meta: WorkflowMeta): void {
    this.ensureSchema();
    this.sql.exec("INSERT OR REPLACE INTO meta (key, json) VALUES ('meta', ?)", JSON.stringify(meta));
  }

  call(id: string): CallRecord | undefined {
    if (!this.migrated) return undefined;
    const row = this.sql.exec<{ json: string }>("SELECT json FROM calls WHERE call_id = ?", id).toArray()[0];
    return row === undefined ? undefined : CallRecordSchema.parse(JSON.parse(row.json));
  }

  saveCall(c: CallRecord): void {
    this.ensureSchema();
    this.sql.exec("INSERT OR REPLACE INTO calls (call_id, stage, json) VALUES (?, ?, ?)", c.id, c.stageIndex, JSON.stringify(c));
  }

  /** Every call, by stage and then by its place in the stage (the id's last segment, compared as a number). */
  calls(): CallRecord[] {
    const place = (id: string): number => Number(id.slice(id.lastIndexOf(":") + 1));
    if (!this.migrated) return [];
    return this.sql
      .exec<{ json: string }>("SELECT json FROM calls")
      .toArray()
      .map((r) => CallRecordSchema.parse(JSON.parse(r.json)))
      .sort((a, b) => a.stageIndex - b.stageIndex || place(a.id) - place(b.id));
  }

  redispatches(): Redispatch[] {
    if (!this.migrated) return [];
    return this.sql.exec<{ json: string }>("SELECT json FROM redispatch").toArray().map((r) => RedispatchSchema.parse(JSON.parse(r.json)));
  }

  saveRedispatch(r: Redispatch): void {
    this.ensureSchema();
    this.sql.exec("INSERT OR REPLACE INTO redispatch (call_id, json) VALUES (?, ?)", r.call.id, JSON.stringify(r));
  }

  dropRedispatch(callId: string): void {
    if (this.migrated) this.sql.exec("DELETE FROM redispatch WHERE call_id = ?", callId);
  }

  /** Appends an event after the last one; its sequence number, or undefined before the workflow exists. */
  appendEvent(data: WorkflowEventData): number | undefined {
    if (!this.migrated) return undefined;
    const row = this.sql.exec<{ seq: number }>("INSERT INTO events (seq, type, json) VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM events), ?, ?) RETURNING seq", data.type, JSON.stringify(data)).one();
    return row.seq;
  }

  /** Up to `limit` events after `afterSeq`, in order. */
  events(afterSeq: number, limit: number): WorkflowEvent[] {
    if (!this.migrated) return [];
    return this.sql
      .exec<{ seq: number; json: string }>("SELECT seq, json FROM events WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit)
      .toArray()
      .map((r) => ({ seq: r.seq, data: WorkflowEventDataSchema.parse(JSON.parse(r.json)) }));
  }

  /** The last event's number and whether it ended the stream; seq 0 when there is none. */
  lastEvent(): { seq: number; done: boolean } {
    if (!this.migrated) return { seq: 0, done: false };
    const row = this.sql.exec<{ seq: number; type: string }>("SELECT seq, type FROM events ORDER BY seq DESC LIMIT 1").toArray()[0];
    return row === undefined ? { seq: 0, done: false } : { seq: row.seq, done: row.type === "workflow_done" };
  }

  /** What the calls of one stage wrote, in call order ("" for a call that wrote nothing). */
  outputs(stageIndex: number): string[] {
    return this.calls().filter((c) => c.stageIndex === stageIndex).map((c) => c.output ?? "");
  }
}

/** Not ended yet: queued (its first stage not placed) or running. */
export const isLive = (m: WorkflowMeta | undefined): m is WorkflowMeta => m !== undefined && (m.status === "running" || m.status === "queued");

/** The SLO a workflow is measured against: the one asked for, whatever it was scheduled with. */
export function ownSloS(meta: WorkflowMeta): number {
  return meta.requestedSloS ?? meta.state.sloS;
}
