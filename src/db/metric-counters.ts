/**
 * The persisted Prometheus counters and the pool list of the TRACES database (migrations/0004_metrics.sql),
 * read by GET /metrics (src/api/metrics.ts). Increments are computed in src/core/metric-increments.ts.
 */
import { z } from "zod";
import { canonicalLabels, type CounterIncrement } from "../core/metric-increments";
import type { StoredCounter } from "../core/metrics-catalog";

/**
 * All the increments in one statement, as one JSON parameter (D1 caps a statement's bound parameters at 100).
 * With `unlessTraced`, nothing is added once that workflow's trace row exists: placed before the trace insert
 * in the same batch, a batch that runs again (the alarm retried) counts nothing twice.
 */
export function bumpCounters(db: D1Database, incs: readonly CounterIncrement[], unlessTraced?: string): D1PreparedStatement {
  const rows = JSON.stringify(incs.map((i) => ({ n: i.name, l: canonicalLabels(i.labels), v: i.value })));
  // The WHERE clause also keeps SQLite from reading ON CONFLICT as part of the SELECT (its upsert parsing rule).
  return db
    .prepare(
      `INSERT INTO metric_counters (name, labels, value)
       SELECT json_extract(value, '$.n'), json_extract(value, '$.l'), json_extract(value, '$.v') FROM json_each(?1)
       WHERE ?2 IS NULL OR NOT EXISTS (SELECT 1 FROM workflow_traces WHERE workflow_id = ?2)
       ON CONFLICT (name, labels) DO UPDATE SET value = value + excluded.value`,
    )
    .bind(rows, unlessTraced ?? null);
}

export function addPool(db: D1Database, pool: string): D1PreparedStatement {
  return db.prepare("INSERT OR IGNORE INTO pools (name) VALUES (?)").bind(pool);
}

const CounterRowSchema = z.object({ name: z.string(), labels: z.string(), value: z.number() });
const LabelsSchema = z.record(z.string(), z.string());

/** The whole table: its size is the label sets' cardinality, not the traffic's. */
export async function readCounters(db: D1Database): Promise<StoredCounter[]> {
  const { results } = await db.prepare("SELECT name, labels, value FROM metric_counters").all();
  return results.map((raw) => {
    const r = CounterRowSchema.parse(raw);
    return { name: r.name, labels: LabelsSchema.parse(JSON.parse(r.labels)), value: r.value };
  });
}

export async function listPools(db: D1Database): Promise<string[]> {
  const { results } = await db.prepare("SELECT name FROM pools ORDER BY name").all();
  return z.array(z.object({ name: z.string() })).parse(results).map((r) => r.name);
}
