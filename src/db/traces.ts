/**
 * The traces in D1 (binding TRACES, migrations/): written once per finished workflow, off the hot path
 * (the WorkflowObject's alarm), read by the admin export and the tuner, pruned by age and count.
 */
import { z } from "zod";
import { workflowIncrements } from "../core/metric-increments";
import { CallTraceRowSchema, WorkflowTraceRowSchema, type CallTraceRow, type WorkflowTraceRow } from "../core/trace-rows";
import { addPool, bumpCounters } from "./metric-counters";

const WORKFLOW_COLUMNS = Object.keys(WorkflowTraceRowSchema.shape) as (keyof WorkflowTraceRow)[];
const CALL_COLUMNS = Object.keys(CallTraceRowSchema.shape) as (keyof CallTraceRow)[];

function insert<R extends Record<string, unknown>>(db: D1Database, table: string, columns: readonly (keyof R & string)[], row: R): D1PreparedStatement {
  // INSERT OR IGNORE: an alarm that runs again after a partial failure or a crash writes nothing twice.
  const sql = `INSERT OR IGNORE INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
  return db.prepare(sql).bind(...columns.map((c) => row[c]));
}

/**
 * All the calls in one statement, as one JSON parameter: a statement's bound parameters are capped (100 on D1)
 * and every statement counts against an invocation's query limit, whatever the number of calls.
 */
function insertCalls(db: D1Database, calls: readonly CallTraceRow[]): D1PreparedStatement {
  const picks = CALL_COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(", ");
  return db.prepare(`INSERT OR IGNORE INTO call_traces (${CALL_COLUMNS.join(", ")}) SELECT ${picks} FROM json_each(?)`).bind(JSON.stringify(calls));
}

/**
 * One D1 batch (one round trip, one transaction) for the workflow, all its calls, and what they add to the
 * /metrics counters. The counters go first, guarded by the workflow row not existing yet, so a batch that
 * runs again (the alarm retried after a lost answer) counts nothing twice. `laxityS`: each call's laxity at
 * admission as its instance computed it (not in the rows).
 */
export async function recordWorkflowTrace(db: D1Database, rows: { workflow: WorkflowTraceRow; calls: CallTraceRow[] }, laxityS: ReadonlyMap<string, number> = new Map()): Promise<void> {
  await db.batch([
    bumpCounters(db, workflowIncrements(rows, laxityS), rows.workflow.workflow_id),
    addPool(db, rows.workflow.pool),
    insert(db, "workflow_traces", WORKFLOW_COLUMNS, rows.workflow),
    ...(rows.calls.length > 0 ? [insertCalls(db, rows.calls)] : []),
  ]);
}

export interface PruneOptions {
  maxAgeMs: number;
  /** Workflows kept at most (the newest by recorded_at_ms), with their calls. */
  maxRows: number;
  nowMs: number;
}

/** Deletes by age, then beyond the newest maxRows workflows, then the calls left without a workflow: one batch. Returns rows deleted. */
export async function pruneTraces(db: D1Database, o: PruneOptions): Promise<{ workflows: number; calls: number }> {
  const cutoff = Math.round(o.nowMs - o.maxAgeMs);
  const keep = Math.max(0, Math.floor(o.maxRows));
  const results = await db.batch([
    db.prepare("DELETE FROM workflow_traces WHERE recorded_at_ms < ?").bind(cutoff),
    db.prepare("DELETE FROM call_traces WHERE recorded_at_ms < ?").bind(cutoff),
    db
      .prepare("DELETE FROM workflow_traces WHERE workflow_id NOT IN (SELECT workflow_id FROM workflow_traces ORDER BY recorded_at_ms DESC, workflow_id DESC LIMIT ?)")
      .bind(keep),
    db.prepare("DELETE FROM call_traces WHERE workflow_id NOT IN (SELECT workflow_id FROM workflow_traces)"),
  ]);
  const changes = results.map((r) => r.meta.changes);
  return { workflows: (changes[0] ?? 0) + (changes[2] ?? 0), calls: (changes[1] ?? 0) + (changes[3] ?? 0) };
}

export interface TraceWindow {
  pool: string;
  /** Wall-clock arrival window, ms since the epoch: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  /** At most this many workflows (the earliest in the window). */
  limit: number;
  /** Only this tenant's workflows (a tenant's own export); all tenants when absent (the admin's). */
  tenant?: string;
}

/** The workflows that arrived in the window, and their calls; rows are checked, since the table outlives this code. */
export async function readTraceWindow(db: D1Database, w: TraceWindow): Promise<{ workflows: WorkflowTraceRow[]; calls: CallTraceRow[] }> {
  const tenant = w.tenant ?? null;
  const found = await db
    .prepare("SELECT * FROM workflow_traces WHERE pool = ?1 AND created_at_ms >= ?2 AND created_at_ms < ?3 AND (?5 IS NULL OR tenant = ?5) ORDER BY created_at_ms, workflow_id LIMIT ?4")
    .bind(w.pool, w.fromMs, w.toMs, w.limit, tenant)
    .all();
  const workflows = z.array(WorkflowTraceRowSchema).parse(found.results);
  if (workflows.length === 0) return { workflows, calls: [] };
  const calls = await db
    .prepare(
      `SELECT * FROM call_traces WHERE workflow_id IN (
         SELECT workflow_id FROM workflow_traces WHERE pool = ?1 AND created_at_ms >= ?2 AND created_at_ms < ?3 AND (?5 IS NULL OR tenant = ?5) ORDER BY created_at_ms, workflow_id LIMIT ?4)`,
    )
    .bind(w.pool, w.fromMs, w.toMs, w.limit, tenant)
    .all();
  return { workflows, calls: z.array(CallTraceRowSchema).parse(calls.results) };
}
