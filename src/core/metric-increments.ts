/**
 * What one ended workflow (or one tuning decision) adds to the persisted Prometheus counters
 * (migrations/0004_metrics.sql metric_counters). Pure: src/db/traces.ts applies the increments in the
 * same D1 batch as the trace insert, so they count exactly once and survive restarts and trace pruning.
 *
 * Histograms are stored cumulatively: an observation x adds 1 to every `le` bucket whose bound is ≥ x
 * and to `+Inf`. A bucket row that does not exist therefore means 0, and rendering needs no prefix sums.
 * The bounds are part of the metric's contract: adding one later would leave it short of the
 * observations made before, so changing them needs a new metric name.
 */
import type { CallTraceRow, WorkflowTraceRow } from "./trace-rows";

export type Labels = Readonly<Record<string, string>>;

export interface CounterIncrement {
  name: string;
  labels: Labels;
  value: number;
}

/** Stable metric names (README "Metrics"); the counter-backed ones live in D1 under these names. */
export const METRIC = {
  workflowsEnded: "hexflow_workflows_ended_total",
  workflowSlo: "hexflow_workflow_slo_total",
  workflowLatency: "hexflow_workflow_latency_seconds",
  laxity: "hexflow_call_laxity_at_admission_seconds",
  dispatched: "hexflow_calls_dispatched_total",
  tuningDecisions: "hexflow_tuning_decisions_total",
} as const;

/** Pool-clock seconds: CHESS workflows take tens of seconds to minutes; SLOs reach a day. */
export const LATENCY_BUCKETS_S: readonly number[] = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000];
/** Laxity is negative once a call is late: the low buckets say how late. */
export const LAXITY_BUCKETS_S: readonly number[] = [-60, -10, -1, 0, 1, 5, 10, 30, 60, 120, 300, 600];

/** Sorted keys, so the same label set is always the same text (the counters' primary key). */
export function canonicalLabels(labels: Labels): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** The spelling of a bucket bound in `le`, as Prometheus clients write it. */
export const leLabel = (bound: number): string => (bound === Infinity ? "+Inf" : String(bound));

/** Adds a histogram observation: cumulative buckets, `_sum` and `_count`. Non-finite values are not observed. */
function observe(out: CounterIncrement[], name: string, labels: Labels, x: number, bounds: readonly number[]): void {
  if (!Number.isFinite(x)) return;
  for (const b of bounds) if (x <= b) out.push({ name: `${name}_bucket`, labels: { ...labels, le: leLabel(b) }, value: 1 });
  out.push({ name: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: 1 });
  out.push({ name: `${name}_sum`, labels, value: x });
  out.push({ name: `${name}_count`, labels, value: 1 });
}

/** One increment per (name, label set): fewer rows in the batch, and no row conflicting with its own statement. */
export function mergeIncrements(incs: readonly CounterIncrement[]): CounterIncrement[] {
  const merged = new Map<string, CounterIncrement>();
  for (const i of incs) {
    const key = `${i.name}\u0000${canonicalLabels(i.labels)}`;
    const seen = merged.get(key);
    merged.set(key, seen === undefined ? { ...i } : { ...seen, value: seen.value + i.value });
  }
  return [...merged.values()];
}

/**
 * A workflow's end: its status; for a success, its latency and SLO outcome (a failure's latency says when
 * it failed, not how fast the pool serves, so it is not observed; failures are in the status count);
 * for each call, the instance it was last bound to, and (when it finished without error) its laxity at admission
 * as the instance computed it (deadline − admission − the instance's estimated service time), which the trace
 * rows cannot rebuild.
 */
export function workflowIncrements(rows: { workflow: WorkflowTraceRow; calls: readonly CallTraceRow[] }, laxityS: ReadonlyMap<string, number>): CounterIncrement[] {
  const w = rows.workflow;
  const wl = { tenant: w.tenant, kind: w.kind, pool: w.pool };
  const out: CounterIncrement[] = [{ name: METRIC.workflowsEnded, labels: { ...wl, status: w.status }, value: 1 }];
  if (w.status === "succeeded" && w.latency_s !== null) {
    observe(out, METRIC.workflowLatency, wl, w.latency_s, LATENCY_BUCKETS_S);
    out.push({ name: METRIC.workflowSlo, labels: { ...wl, outcome: w.slo_met === 1 ? "met" : "missed" }, value: 1 });
  }
  for (const c of rows.calls) {
    const gpu = c.gpu ?? "unknown";
    out.push({ name: METRIC.dispatched, labels: { pool: c.pool, instance: c.instance_id, gpu }, value: 1 });
    // A call that failed may carry a stand-in laxity for an attempt that never reached an instance.
    const lax = c.error === null && c.finished_s !== null ? laxityS.get(c.call_id) : undefined;
    if (lax !== undefined) observe(out, METRIC.laxity, { pool: c.pool, gpu }, lax, LAXITY_BUCKETS_S);
  }
  return mergeIncrements(out);
}

/** A tuning decision, recorded or not installed alike. */
export function tuningIncrement(d: { pool: string; reason: string; installed: boolean }): CounterIncrement {
  return { name: METRIC.tuningDecisions, labels: { pool: d.pool, reason: d.reason, installed: d.installed ? "true" : "false" }, value: 1 };
}
