/**
 * The chaos harness's verdict, from what it submitted, what the gateway says now, the tenant's traces and the
 * emulators' call logs. Pure apart from reading the logs.
 *
 * - lost: accepted (a 202 named an id) but the gateway does not know it (404) or it had not ended by the bound;
 * - duplicated: one key answered with two ids, or a workflow the gateway ran (in the traces or in a call log)
 *   that no key was answered with;
 * - retry-bound violation: a call (x-hexflow-call-id) the emulators logged more than MAX_CALL_ATTEMPTS times;
 * - unexplained: failed or cancelled without an error {code, message}.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { MAX_CALL_ATTEMPTS } from "../../src/core/call-retry";
import { percentile } from "../../src/core/stats";
import type { SubmitOutcome, TraceRows, WorkflowView } from "./chaos-client";

export interface PlannedWorkflow {
  index: number;
  key: string;
  arrivalS: number;
  /** Absent: never submitted (the run ended first). */
  submit?: SubmitOutcome;
  /** The key submitted once more after the drain: the id it answered (null: none) and whether it was marked replayed. */
  recheck?: { id: string | null; replayed: boolean; refusal?: string };
  /** The last answer of GET /v1/workflows/:id for the accepted id. */
  final?: { kind: "view"; view: WorkflowView } | { kind: "not-found" } | { kind: "unknown"; message: string };
}

const CallLineSchema = z.object({ callId: z.string().nullable(), atMs: z.number(), port: z.number() });
export type CallLine = z.infer<typeof CallLineSchema>;

/** Every line of every `*.jsonl` call log in `dir`; a torn last line (the process was killed mid-write) is skipped and counted. */
export function readCallLogs(dir: string): { lines: CallLine[]; torn: number } {
  const lines: CallLine[] = [];
  let torn = 0;
  if (!existsSync(dir)) return { lines, torn };
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".jsonl"))) {
    for (const raw of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (raw.trim() === "") continue;
      try {
        lines.push(CallLineSchema.parse(JSON.parse(raw)));
      } catch {
        torn += 1;
      }
    }
  }
  return { lines, torn };
}

/** A call id is `<workflow id>:<stage>:<index>` (src/core/workflow-run.ts). */
export const workflowOfCall = (callId: string): string => callId.split(":")[0] ?? callId;

export interface RetryBoundFigures {
  bound: number;
  /** Generation requests the emulators logged, and how many had no call id. */
  executions: number;
  unnamed: number;
  torn: number;
  calls: number;
  /** Calls executed more than once. */
  reexecuted: number;
  maxExecutions: number;
  /** A few re-executed calls: the servers (ports) and real ms after the first execution of each. */
  reexecutedSample: { callId: string; runs: { port: number; afterMs: number }[] }[];
  violations: { workflowId: string; callId: string; executions: number }[];
}

export function retryBound(lines: readonly CallLine[], torn: number): RetryBoundFigures {
  const counts = new Map<string, number>();
  const runs = new Map<string, CallLine[]>();
  let unnamed = 0;
  for (const l of lines) {
    if (l.callId === null) unnamed += 1;
    else {
      counts.set(l.callId, (counts.get(l.callId) ?? 0) + 1);
      runs.set(l.callId, [...(runs.get(l.callId) ?? []), l]);
    }
  }
  const reexecutedSample = [...runs]
    .filter(([, r]) => r.length > 1)
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, 8)
    .map(([callId, r]) => {
      const sorted = [...r].sort((a, b) => a.atMs - b.atMs);
      const first = sorted[0]?.atMs ?? 0;
      return { callId, runs: sorted.map((x) => ({ port: x.port, afterMs: x.atMs - first })) };
    });
  const violations = [...counts].filter(([, n]) => n > MAX_CALL_ATTEMPTS).map(([callId, executions]) => ({ workflowId: workflowOfCall(callId), callId, executions }));
  return {
    bound: MAX_CALL_ATTEMPTS,
    executions: lines.length,
    unnamed,
    torn,
    calls: counts.size,
    reexecuted: [...counts.values()].filter((n) => n > 1).length,
    maxExecutions: Math.max(0, ...counts.values()),
    reexecutedSample,
    violations,
  };
}

export interface ChaosFigures {
  planned: number;
  submitted: number;
  accepted: number;
  refused: number;
  refusedByCode: Record<string, number>;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Failed and cancelled workflows by error code ("(none)": no reason given). */
  failedByCode: Record<string, number>;
  unexplained: number;
  lost: number;
  lostDetail: { key: string; id: string; arrivalS: number; why: string }[];
  duplicated: number;
  duplicateDetail: { key: string | null; id: string; why: string }[];
  /** Submissions that needed more than one attempt, and 202s marked Idempotent-Replayed. */
  resubmitted: number;
  /** Accepted keys submitted again after the drain: answered with the same id, marked Idempotent-Replayed, another id, no id. */
  recheck: { checked: number; sameId: number; replayedHeader: number; otherId: number; noId: Record<string, number> };
  /** Why submissions were tried again, by status and code. */
  resubmittedFor: Record<string, number>;
  replayed: number;
  retry: RetryBoundFigures;
  /** What the gateway's views say of call attempts, if they carry `attempts` (null otherwise). */
  gatewayAttempts: { calls: number; retried: number; max: number } | null;
  /** Pool-clock seconds of the succeeded workflows. */
  p50S: number;
  p95S: number;
  /** Accepted workflows that succeeded within their SLO, over accepted. */
  sloAttainment: number;
  traces: { rows: number; truncated: boolean; acceptedMissing: number } | null;
  /** Whether the logged call ids start with known workflow ids (the phantom check from the call logs needs it). */
  callIdsMatchWorkflows: boolean;
}

const bump = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};

export function chaosFigures(planned: readonly PlannedWorkflow[], traces: TraceRows | null, calls: { lines: readonly CallLine[]; torn: number }): ChaosFigures {
  const f: ChaosFigures = {
    planned: planned.length, submitted: 0, accepted: 0, refused: 0, refusedByCode: {}, succeeded: 0, failed: 0, cancelled: 0, failedByCode: {},
    unexplained: 0, lost: 0, lostDetail: [], duplicated: 0, duplicateDetail: [], resubmitted: 0, resubmittedFor: {}, replayed: 0, recheck: { checked: 0, sameId: 0, replayedHeader: 0, otherId: 0, noId: {} },
    retry: retryBound(calls.lines, calls.torn), gatewayAttempts: null, p50S: Number.NaN, p95S: Number.NaN, sloAttainment: Number.NaN, traces: null,
    callIdsMatchWorkflows: true,
  };
  const known = new Set<string>();
  const latencies: number[] = [];
  let onTime = 0;
  let attemptCalls = 0;
  let attemptRetried = 0;
  let attemptMax = 0;
  for (const p of planned) {
    if (p.submit === undefined) continue;
    f.submitted += 1;
    if (p.submit.attempts > 1) f.resubmitted += 1;
    for (const why of p.submit.retriedFor) bump(f.resubmittedFor, why);
    f.replayed += p.submit.replayed;
    for (const id of p.submit.ids) known.add(id);
    const [id, ...others] = p.submit.ids;
    for (const other of others) f.duplicateDetail.push({ key: p.key, id: other, why: `a second id for key ${p.key} (first ${id ?? ""})` });
    if (p.recheck !== undefined && id !== undefined) {
      f.recheck.checked += 1;
      if (p.recheck.replayed) f.recheck.replayedHeader += 1;
      if (p.recheck.id === id) f.recheck.sameId += 1;
      else if (p.recheck.id === null) bump(f.recheck.noId, p.recheck.refusal ?? "unknown");
      else {
        f.recheck.otherId += 1;
        known.add(p.recheck.id);
        f.duplicateDetail.push({ key: p.key, id: p.recheck.id, why: `submitting key ${p.key} again after the run answered another id (first ${id})` });
      }
    }
    if (id === undefined) {
      f.refused += 1;
      bump(f.refusedByCode, p.submit.refusal === undefined ? "unknown" : `${p.submit.refusal.status ?? "no answer"} ${p.submit.refusal.code}`);
      continue;
    }
    f.accepted += 1;
    const final = p.final;
    if (final === undefined || final.kind !== "view") {
      f.lostDetail.push({ key: p.key, id, arrivalS: p.arrivalS, why: final === undefined ? "never polled" : final.kind === "not-found" ? "404: the gateway does not know it" : `no answer: ${final.message}` });
      continue;
    }
    const v = final.view;
    if (v.status === "succeeded") {
      f.succeeded += 1;
      if (v.latencyMs !== null) latencies.push(v.latencyMs / 1000);
      if (v.sloMet === true) onTime += 1;
    } else if (v.status === "failed" || v.status === "cancelled") {
      if (v.status === "failed") f.failed += 1;
      else f.cancelled += 1;
      bump(f.failedByCode, `${v.status}: ${v.error?.code ?? "(none)"}`);
      if (v.error === undefined) f.unexplained += 1;
    } else {
      const open = v.stages.flatMap((st) => st.calls).filter((c) => c.finishedMs === null || c.finishedMs === undefined);
      const where = open.map((c) => `${c.id.slice(c.id.indexOf(":"))}@${c.instance ?? "queued"}${c.admittedMs === null || c.admittedMs === undefined ? "" : " (admitted)"}`);
      const released = v.stages.filter((st) => st.calls.length > 0).length;
      const lastEnd = Math.max(0, ...v.stages.flatMap((st) => st.calls.map((c) => c.finishedMs ?? 0)));
      f.lostDetail.push({
        key: p.key,
        id,
        arrivalS: p.arrivalS,
        why: `still ${v.status} at the time bound; ${released} of ${v.stages.length} stages released, last call ended at ${(lastEnd / 1000).toFixed(0)} s; unfinished calls: ${where.slice(0, 6).join(", ") || "none"}${where.length > 6 ? ", …" : ""}`,
      });
    }
    for (const c of v.stages.flatMap((s) => s.calls)) {
      if (c.attempts === undefined) continue;
      attemptCalls += 1;
      if (c.attempts > 1) attemptRetried += 1;
      attemptMax = Math.max(attemptMax, c.attempts);
    }
  }
  if (attemptCalls > 0) f.gatewayAttempts = { calls: attemptCalls, retried: attemptRetried, max: attemptMax };
  f.lost = f.lostDetail.length;
  // Workflows the gateway ran that no key was answered with: in the traces, or executing calls on a server.
  const phantom = new Map<string, string>();
  if (traces !== null) {
    for (const r of traces.workflows) if (!known.has(r.workflow_id)) phantom.set(r.workflow_id, `in the tenant's traces (${r.status}) but never answered to a submission`);
    const traced = new Set(traces.workflows.map((r) => r.workflow_id));
    const endedAccepted = planned.filter((p) => p.final?.kind === "view" && TERMINAL.has(p.final.view.status)).map((p) => p.submit?.ids[0] ?? "");
    f.traces = { rows: traces.workflows.length, truncated: traces.truncated, acceptedMissing: endedAccepted.filter((id) => !traced.has(id)).length };
  }
  // Only while call ids do start with their workflow's id (most of them match a known workflow): otherwise
  // the format changed and every call would look like a stranger's.
  const named = calls.lines.filter((l): l is CallLine & { callId: string } => l.callId !== null);
  const matching = named.filter((l) => known.has(workflowOfCall(l.callId))).length;
  f.callIdsMatchWorkflows = named.length === 0 || matching * 2 >= named.length;
  if (f.callIdsMatchWorkflows) {
    for (const l of named) {
      const wf = workflowOfCall(l.callId);
      if (!known.has(wf) && !phantom.has(wf)) phantom.set(wf, "executed calls on an emulated server but was never answered to a submission");
    }
  }
  for (const [id, why] of phantom) f.duplicateDetail.push({ key: null, id, why });
  f.duplicated = f.duplicateDetail.length;
  f.p50S = percentile(latencies, 0.5);
  f.p95S = percentile(latencies, 0.95);
  f.sloAttainment = f.accepted === 0 ? Number.NaN : onTime / f.accepted;
  return f;
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/** The run passes when nothing was lost, duplicated, executed beyond the bound, or failed without a reason. */
export function chaosVerdict(f: ChaosFigures): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  if (f.lost > 0) problems.push(`${f.lost} lost`);
  if (f.duplicated > 0) problems.push(`${f.duplicated} duplicated`);
  if (f.retry.violations.length > 0) problems.push(`${f.retry.violations.length} calls executed more than ${f.retry.bound} times`);
  if (f.unexplained > 0) problems.push(`${f.unexplained} failed without a reason`);
  return { ok: problems.length === 0, problems };
}
