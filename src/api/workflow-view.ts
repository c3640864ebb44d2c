import type { CallRecord, WorkflowMeta } from "../objects/workflow";
import { ownSloS } from "../objects/workflow-store";
import { text2sqlView } from "./text2sql-view";

const ms = (s: number | undefined): number | null => (s === undefined ? null : Math.round(s * 1000 * 1000) / 1000);

/**
 * The public shape of a workflow. Times are pool-clock milliseconds since the workflow arrived
 * (emulated time on an emulated pool), so they compare directly with its SLO.
 */
export function workflowView(meta: WorkflowMeta, calls: CallRecord[]) {
  const a = meta.state.arrivalS;
  const rel = (t: number | undefined) => ms(t === undefined ? undefined : t - a);
  const latencyMs = rel(meta.state.finishedAt);

  const callView = (c: CallRecord) => ({
    id: c.id,
    instance: c.instanceId,
    inputTokens: c.inputTokens,
    outputTokens: c.outputTokens,
    completionTokens: c.completionTokens ?? null,
    estimateMs: ms(c.estimateS),
    budgetMs: ms(c.budgetS),
    releasedMs: rel(c.releasedAt),
    deadlineMs: rel(c.deadlineS),
    enqueuedMs: rel(c.enqueuedAt),
    admittedMs: rel(c.admittedAt),
    finishedMs: rel(c.finishedAt),
    laxityAtAdmissionMs: ms(c.laxityS),
    alphaVersion: c.alphaVersion,
    /** Attempts counted toward the retry bound (core/call-retry): the failed ones, each on its instance, and the current one unless the call ended failed. */
    attempts: c.failures.length + (c.error !== undefined && c.finishedAt !== undefined ? 0 : 1),
    failures: c.failures,
    ...(c.output !== undefined ? { output: c.output } : {}),
    ...(c.error ? { error: c.error } : {}),
  });

  /** A stage runs from its release until its slowest call finishes (fan-in). */
  const stageView = (step: string, index: number) => {
    const own = calls.filter((c) => c.stageIndex === index);
    const released = own[0]?.releasedAt;
    const done = own.length > 0 && own.every((c) => c.finishedAt !== undefined) ? Math.max(...own.map((c) => c.finishedAt ?? 0)) : undefined;
    return {
      index,
      step,
      releasedMs: rel(released),
      finishedMs: rel(done),
      durationMs: released === undefined || done === undefined ? null : ms(done - released),
      calls: own.map(callView),
    };
  };

  return {
    id: meta.state.id,
    kind: meta.state.spec.kind,
    status: meta.status,
    ...(meta.error ? { error: meta.error } : {}),
    createdAt: new Date(meta.createdAtMs).toISOString(),
    sloMs: ms(ownSloS(meta)),
    ...(meta.bestEffort ? { bestEffort: true } : {}),
    latencyMs,
    sloMet: latencyMs === null ? null : latencyMs <= (ms(ownSloS(meta)) ?? 0),
    ...(meta.text2sql === undefined ? {} : { text2sql: text2sqlView(meta.text2sql) }),
    stages: meta.state.spec.stages.map((s, index) => stageView(s.step, index)),
  };
}
