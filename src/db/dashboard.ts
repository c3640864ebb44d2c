/** The D1 reads behind the operator dashboard (src/api/admin-dashboard.ts): bounded, indexed, one pool. */
import { z } from "zod";
import type { SeriesRow } from "../core/dashboard";
import { CallTraceRowSchema, WorkflowTraceRowSchema, type CallTraceRow, type WorkflowTraceRow } from "../core/trace-rows";

/** A scrape of the charts never reads more than this many workflows (hours of traffic at a few per second). */
export const MAX_SERIES_ROWS = 20_000;

const SeriesRowSchema = WorkflowTraceRowSchema.pick({ status: true, latency_s: true, slo_met: true, slo_s: true, recorded_at_ms: true });

/** The pool's workflows that ended at or after `sinceMs` (wall clock), oldest first. */
export async function endedSince(db: D1Database, pool: string, sinceMs: number): Promise<{ rows: SeriesRow[]; truncated: boolean }> {
  const { results } = await db
    .prepare("SELECT status, latency_s, slo_met, slo_s, recorded_at_ms FROM workflow_traces WHERE recorded_at_ms >= ? AND pool = ? ORDER BY recorded_at_ms DESC LIMIT ?")
    .bind(Math.floor(sinceMs), pool, MAX_SERIES_ROWS)
    .all();
  const rows = z.array(SeriesRowSchema).parse(results).reverse();
  return { rows, truncated: rows.length === MAX_SERIES_ROWS };
}

/** The pool's `limit` most recently ended workflows, with their calls. */
export async function recentWorkflows(db: D1Database, pool: string, limit: number): Promise<{ workflows: WorkflowTraceRow[]; calls: CallTraceRow[] }> {
  const found = await db.prepare("SELECT * FROM workflow_traces WHERE pool = ? ORDER BY recorded_at_ms DESC, workflow_id DESC LIMIT ?").bind(pool, limit).all();
  const workflows = z.array(WorkflowTraceRowSchema).parse(found.results);
  if (workflows.length === 0) return { workflows, calls: [] };
  const calls = await db
    .prepare("SELECT * FROM call_traces WHERE workflow_id IN (SELECT value FROM json_each(?))")
    .bind(JSON.stringify(workflows.map((w) => w.workflow_id)))
    .all();
  return { workflows, calls: z.array(CallTraceRowSchema).parse(calls.results) };
}
