import { z } from "zod";
import { CHESS_STEP_MEANS, CHESS_TEMPLATE } from "../core/chess";
import type { CallSpec, StageSpec, WorkflowSpec } from "../core/workflow";
import type { WorkloadItem } from "./workload";

/** The columns of workflow_traces the tuner reads (migrations/0001_traces.sql). */
export const WorkflowTraceRowSchema = z.object({
  workflow_id: z.string(),
  arrival_s: z.number(),
  slo_s: z.number().positive(),
});
export type WorkflowTraceRow = z.infer<typeof WorkflowTraceRowSchema>;

/** The columns of call_traces the tuner reads. */
export const CallTraceRowSchema = z.object({
  call_id: z.string(),
  workflow_id: z.string(),
  stage_index: z.number().int().nonnegative(),
  step: z.string().min(1),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nullable(),
});
export type CallTraceRow = z.infer<typeof CallTraceRowSchema>;

/** A workflow of the window as the simulator replays it: its observed arrival, its own SLO. */
export interface WindowWorkflow extends WorkloadItem {
  sloS: number;
}

/**
 * A call that failed or was cancelled has no recorded output; it still occupied a server, so it is
 * replayed with its step's mean output (CHESS), or one token for a step nobody has a mean for.
 */
function outputTokens(c: CallTraceRow): number {
  if (c.output_tokens !== null && c.output_tokens > 0) return c.output_tokens;
  return CHESS_STEP_MEANS[c.step]?.outputTokens ?? 1;
}

function compareCalls(a: CallTraceRow, b: CallTraceRow): number {
  return a.stage_index - b.stage_index || (a.call_id < b.call_id ? -1 : a.call_id > b.call_id ? 1 : 0);
}

/**
 * Rebuilds the window's workflows from trace rows: a stage is the calls that share a stage_index, and
 * the budget's template is CHESS's when every step is a CHESS step, else the workflow's own steps
 * (the rule replay requests follow, src/api/workflow-request.ts). Arrivals are shifted so the first
 * is at 0; their spacing (the real burstiness) is kept. Workflows without calls are left out.
 */
export function rebuildWindow(workflows: readonly WorkflowTraceRow[], calls: readonly CallTraceRow[]): WindowWorkflow[] {
  const byWorkflow = new Map<string, CallTraceRow[]>();
  for (const c of calls) {
    const list = byWorkflow.get(c.workflow_id);
    if (list === undefined) byWorkflow.set(c.workflow_id, [c]);
    else list.push(c);
  }
  const out: WindowWorkflow[] = [];
  for (const w of workflows) {
    const rows = byWorkflow.get(w.workflow_id);
    if (rows === undefined || rows.length === 0) continue;
    rows.sort(compareCalls);
    const stages: StageSpec[] = [];
    let index = -1;
    for (const r of rows) {
      const call: CallSpec = { step: r.step, inputTokens: r.input_tokens, outputTokens: outputTokens(r) };
      const last = stages.at(-1);
      if (last !== undefined && r.stage_index === index) last.calls.push(call);
      else stages.push({ step: r.step, calls: [call] });
      index = r.stage_index;
    }
    const chess = rows.every((r) => Object.hasOwn(CHESS_STEP_MEANS, r.step));
    const spec: WorkflowSpec = { kind: chess ? "chess" : "replay", stages, template: chess ? [...CHESS_TEMPLATE] : stages.map((s) => s.step) };
    out.push({ id: w.workflow_id, arrivalS: w.arrival_s, sloS: w.slo_s, spec });
  }
  out.sort((a, b) => a.arrivalS - b.arrivalS);
  const first = out[0]?.arrivalS ?? 0;
  return out.map((w) => ({ ...w, arrivalS: w.arrivalS - first }));
}

/** Workflows per second over the window (first to last arrival); NaN under two workflows. */
export function arrivalRate(window: readonly WindowWorkflow[]): number {
  const first = window[0];
  const last = window.at(-1);
  if (first === undefined || last === undefined || window.length < 2 || last.arrivalS <= first.arrivalS) return Number.NaN;
  return (window.length - 1) / (last.arrivalS - first.arrivalS);
}

