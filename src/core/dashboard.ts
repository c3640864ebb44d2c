/**
 * What the operator dashboard (`/dashboard`, web/dashboard/) draws, computed from the D1 traces: the pool's
 * P95 latency, SLO attainment and throughput over time, and the call timelines of recent workflows. Pure, so
 * the numbers are tested in Node and the admin route only reads rows.
 *
 * Times: a point's `atMs` is wall-clock (when workflows ended, `recorded_at_ms`), so the charts move with
 * real time; latencies are on the pool clock (emulated seconds on an emulated fleet), as the API reports them.
 */
import { z } from "zod";
import { sortedPercentile } from "./stats";
import type { CallTraceRow, WorkflowTraceRow } from "./trace-rows";

export const SeriesOptionsSchema = z.object({
  /** How far back the charts reach (s). */
  windowS: z.coerce.number().int().min(60).max(24 * 3600).default(900),
  /** One point every stepS seconds. */
  stepS: z.coerce.number().int().min(1).max(3600).default(10),
  /** Each point summarises the workflows that ended in the spanS seconds before it: a P95 needs more than one step's few samples. */
  spanS: z.coerce.number().int().min(1).max(3600).default(60),
});
export type SeriesOptions = z.infer<typeof SeriesOptionsSchema>;

export interface SeriesPoint {
  atMs: number;
  /** Workflows that ended (succeeded or failed; cancelled ones say nothing about the pool) in the span. */
  ended: number;
  /** P95 latency of the succeeded ones, pool-clock seconds; null without any. */
  p95S: number | null;
  /** Share of the ended ones that met their SLO (a failure misses it); null without any. */
  attainment: number | null;
  /** Succeeded workflows per wall-clock second over the span. */
  throughputPerS: number;
  /** The median SLO of the ended ones (s): the line the P95 is to be read against, whatever the tenants' classes. */
  sloP50S: number | null;
}

export type SeriesRow = Pick<WorkflowTraceRow, "status" | "latency_s" | "slo_met" | "slo_s" | "recorded_at_ms">;

/** Points from oldest to newest, the last one at `nowMs`. Rows outside [now - window - span, now] are ignored. */
export function latencySeries(rows: readonly SeriesRow[], nowMs: number, o: SeriesOptions): SeriesPoint[] {
  const stepMs = o.stepS * 1000;
  const spanMs = o.spanS * 1000;
  const ended = rows.filter((r) => r.status !== "cancelled").sort((a, b) => a.recorded_at_ms - b.recorded_at_ms);
  const points: SeriesPoint[] = [];
  const steps = Math.floor((o.windowS * 1000) / stepMs);
  // Two cursors over the sorted rows: each row enters and leaves the sliding span once.
  let lo = 0;
  let hi = 0;
  for (let i = steps; i >= 0; i--) {
    const atMs = nowMs - i * stepMs;
    while (hi < ended.length && (ended[hi]?.recorded_at_ms ?? Infinity) <= atMs) hi++;
    while (lo < hi && (ended[lo]?.recorded_at_ms ?? Infinity) <= atMs - spanMs) lo++;
    const inSpan = ended.slice(lo, hi);
    const latencies = inSpan.flatMap((r) => (r.status === "succeeded" && r.latency_s !== null ? [r.latency_s] : [])).sort((a, b) => a - b);
    const met = inSpan.filter((r) => r.slo_met === 1).length;
    const slos = inSpan.map((r) => r.slo_s).sort((a, b) => a - b);
    points.push({
      atMs,
      ended: inSpan.length,
      p95S: latencies.length === 0 ? null : sortedPercentile(latencies, 0.95),
      attainment: inSpan.length === 0 ? null : met / inSpan.length,
      throughputPerS: latencies.length / o.spanS,
      sloP50S: slos.length === 0 ? null : sortedPercentile(slos, 0.5),
    });
  }
  return points;
}

export interface TimelineCall {
  id: string;
  step: string;
  instance: string;
  gpu: string | null;
  /** Seconds after the workflow's arrival (pool clock): released by its stage, queued on the instance, running, ended. */
  releasedS: number;
  enqueuedS: number | null;
  startedS: number | null;
  finishedS: number | null;
  met: boolean | null;
  error: string | null;
}

export interface WorkflowTimeline {
  id: string;
  tenant: string;
  kind: string;
  status: WorkflowTraceRow["status"];
  latencyS: number | null;
  sloS: number;
  sloMet: boolean | null;
  endedAtMs: number;
  calls: TimelineCall[];
}

const rel = (t: number | null, zero: number): number | null => (t === null ? null : t - zero);
const bool = (v: 0 | 1 | null): boolean | null => (v === null ? null : v === 1);

/** Each workflow with its calls in release order, times relative to its arrival; newest workflow first. */
export function timelines(workflows: readonly WorkflowTraceRow[], calls: readonly CallTraceRow[]): WorkflowTimeline[] {
  return [...workflows]
    .sort((a, b) => b.recorded_at_ms - a.recorded_at_ms)
    .map((w) => ({
      id: w.workflow_id,
      tenant: w.tenant,
      kind: w.kind,
      status: w.status,
      latencyS: w.latency_s,
      sloS: w.slo_s,
      sloMet: bool(w.slo_met),
      endedAtMs: w.recorded_at_ms,
      calls: calls
        .filter((c) => c.workflow_id === w.workflow_id)
        .sort((a, b) => a.released_s - b.released_s || a.call_id.localeCompare(b.call_id))
        .map((c) => ({
          id: c.call_id,
          step: c.step,
          instance: c.instance_id,
          gpu: c.gpu,
          releasedS: c.released_s - w.arrival_s,
          enqueuedS: rel(c.enqueued_s, w.arrival_s),
          startedS: rel(c.admitted_s, w.arrival_s),
          finishedS: rel(c.finished_s, w.arrival_s),
          met: bool(c.met),
          error: c.error,
        })),
    }));
}
