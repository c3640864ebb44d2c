/**
 * The rows a finished workflow leaves in D1 (migrations/0001_traces.sql, 0002), built from what its
 * WorkflowObject stored, and the reference trace format (src/core/chess.ts) rebuilt from such rows so
 * production traffic can be replayed in the simulator. Pure: the object and the admin route do the I/O.
 */
import { groupBy } from "./group-by";
import { z } from "zod";
import type { TraceEntry } from "./chess";

/** Retention of the traces, in one place: the tuner's cron (and 1 in `pruneOneIn` workflow ends) prunes with it. */
export const TRACE_RETENTION = {
  /** Rows recorded longer ago than this go. */
  maxAgeMs: 7 * 24 * 3600 * 1000,
  /** At most this many workflows (the newest) are kept, with their calls. */
  maxRows: 200_000,
  /** Without a cron, a workflow end prunes with this probability's inverse, so pruning costs O(1) per workflow on average. */
  pruneOneIn: 500,
} as const;

/** A workflow's end is written at most this many times before it is given up (each failure is an alarm retry). */
export const MAX_TRACE_ATTEMPTS = 5;

const sqlBool = z.union([z.literal(0), z.literal(1)]).nullable();

export const WorkflowTraceRowSchema = z.object({
  workflow_id: z.string(),
  tenant: z.string(),
  pool: z.string(),
  kind: z.string(),
  status: z.enum(["succeeded", "failed", "cancelled"]),
  arrival_s: z.number(),
  finished_s: z.number().nullable(),
  slo_s: z.number(),
  latency_s: z.number().nullable(),
  slo_met: sqlBool,
  policy: z.string().nullable(),
  alpha_version: z.number().int().nullable(),
  error_code: z.string().nullable(),
  created_at_ms: z.number().int().nullable(),
  recorded_at_ms: z.number().int(),
});
export type WorkflowTraceRow = z.infer<typeof WorkflowTraceRowSchema>;

export const CallTraceRowSchema = z.object({
  call_id: z.string(),
  workflow_id: z.string(),
  tenant: z.string(),
  pool: z.string(),
  stage_index: z.number().int(),
  step: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int().nullable(),
  instance_id: z.string(),
  gpu: z.string().nullable(),
  released_s: z.number(),
  enqueued_s: z.number().nullable(),
  admitted_s: z.number().nullable(),
  finished_s: z.number().nullable(),
  deadline_s: z.number(),
  budget_s: z.number(),
  met: sqlBool,
  alpha_version: z.number().int().nullable(),
  error: z.string().nullable(),
  recorded_at_ms: z.number().int(),
});
export type CallTraceRow = z.infer<typeof CallTraceRowSchema>;

/** What a WorkflowObject knows about itself, as plain data (the object's own types stay in src/objects). */
export interface TraceMetaInput {
  id: string;
  kind: string;
  status: "succeeded" | "failed" | "cancelled";
  pool: string;
  arrivalS: number;
  sloS: number;
  finishedAt?: number | undefined;
  createdAtMs: number;
  errorCode?: string | undefined;
}

export interface TraceCallInput {
  id: string;
  stageIndex: number;
  step: string;
  inputTokens: number;
  instanceId: string;
  budgetS: number;
  deadlineS: number;
  alphaVersion: number;
  releasedAt: number;
  enqueuedAt?: number | undefined;
  admittedAt?: number | undefined;
  finishedAt?: number | undefined;
  completionTokens?: number | undefined;
  error?: string | undefined;
}

export interface TraceExtra {
  tenant: string;
  /** The pool's policy when the workflow ended (null when the coordinator could not say). */
  policy: string | null;
  gpuOf(instanceId: string): string | null;
  nowMs: number;
}

const flag = (b: boolean | null): 0 | 1 | null => (b === null ? null : b ? 1 : 0);
const opt = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** The place of a call within its stage: the last segment of its id (`<workflow>:<stage>:<i>`). */
export function callPlace(callId: string): number {
  return Number(callId.slice(callId.lastIndexOf(":") + 1));
}

/**
 * One workflow row and one row per call. A workflow that did not succeed has no latency; it missed
 * its SLO if it failed, and says nothing about it if it was cancelled. The workflow's α version is
 * that of its last released stage.
 */
export function traceRows(meta: TraceMetaInput, calls: readonly TraceCallInput[], extra: TraceExtra): { workflow: WorkflowTraceRow; calls: CallTraceRow[] } {
  const finished = meta.status === "succeeded" ? opt(meta.finishedAt) : null;
  const latency = finished === null ? null : finished - meta.arrivalS;
  const met = latency !== null ? latency <= meta.sloS : meta.status === "failed" ? false : null;
  const ordered = [...calls].sort((a, b) => a.stageIndex - b.stageIndex || callPlace(a.id) - callPlace(b.id));
  const workflow: WorkflowTraceRow = {
    workflow_id: meta.id,
    tenant: extra.tenant,
    pool: meta.pool,
    kind: meta.kind,
    status: meta.status,
    arrival_s: meta.arrivalS,
    finished_s: finished,
    slo_s: meta.sloS,
    latency_s: latency,
    slo_met: flag(met),
    policy: extra.policy,
    alpha_version: ordered.at(-1)?.alphaVersion ?? null,
    error_code: opt(meta.errorCode),
    created_at_ms: Math.round(meta.createdAtMs),
    recorded_at_ms: Math.round(extra.nowMs),
  };
  const rows = ordered.map(
    (c): CallTraceRow => ({
      call_id: c.id,
      workflow_id: meta.id,
      tenant: extra.tenant,
      pool: meta.pool,
      stage_index: c.stageIndex,
      step: c.step,
      input_tokens: c.inputTokens,
      output_tokens: opt(c.completionTokens),
      instance_id: c.instanceId,
      gpu: extra.gpuOf(c.instanceId),
      released_s: c.releasedAt,
      enqueued_s: opt(c.enqueuedAt),
      admitted_s: opt(c.admittedAt),
      finished_s: opt(c.finishedAt),
      deadline_s: c.deadlineS,
      budget_s: c.budgetS,
      met: flag(c.finishedAt === undefined || c.error !== undefined ? null : c.finishedAt <= c.deadlineS),
      alpha_version: c.alphaVersion,
      error: opt(c.error),
      recorded_at_ms: Math.round(extra.nowMs),
    }),
  );
  return { workflow, calls: rows };
}

/** What an export holds: the reference trace, and the arrival process it came with (pool-clock seconds from the first arrival). */
export interface ReferenceExport {
  trace: TraceEntry[];
  arrivals_s: number[];
  workflow_ids: string[];
  /** Workflows in the window that cannot be replayed: not succeeded, or a call with no output length. */
  skipped: number;
}

/**
 * Rebuilds the reference trace format from rows: one entry per succeeded workflow, in arrival order,
 * its calls in call order (stage, then place) with their input and produced output lengths.
 */
export function referenceExport(workflows: readonly WorkflowTraceRow[], calls: readonly CallTraceRow[]): ReferenceExport {
  const byWorkflow = groupBy(calls, (c) => c.workflow_id);
  const out: ReferenceExport = { trace: [], arrivals_s: [], workflow_ids: [], skipped: 0 };
  const sorted = [...workflows].sort((a, b) => a.arrival_s - b.arrival_s || a.workflow_id.localeCompare(b.workflow_id));
  for (const w of sorted) {
    const own = (byWorkflow.get(w.workflow_id) ?? []).sort((a, b) => a.stage_index - b.stage_index || callPlace(a.call_id) - callPlace(b.call_id));
    const steps = own.flatMap((c) => (c.output_tokens !== null && c.output_tokens > 0 ? [{ step: c.step, input_length: c.input_tokens, output_length: c.output_tokens }] : []));
    if (w.status !== "succeeded" || own.length === 0 || steps.length !== own.length) {
      out.skipped += 1;
      continue;
    }
    out.trace.push({ Text2SQLRequest: steps });
    out.arrivals_s.push(w.arrival_s);
    out.workflow_ids.push(w.workflow_id);
  }
  const first = out.arrivals_s[0] ?? 0;
  out.arrivals_s = out.arrivals_s.map((a) => Math.round((a - first) * 1e6) / 1e6);
  return out;
}
