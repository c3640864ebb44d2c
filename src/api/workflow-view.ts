import type { CallRecord, WorkflowMeta } from "../objects/workflow";

const ms = (s: number | undefined): number | null => (s === undefined ? null : Math.round(s * 1000 * 1000) / 1000);

/**
 * The public shape of a workflow. Times are pool-clock milliseconds since the workflow arrived
 * (emulated time on an emulated pool), so they compare directly with its SLO.
 */
export function workflowView(meta: WorkflowMeta, calls: CallRecord[]) {
  const a = meta.state.arrivalS;
  const rel = (t: number | undefined) => ms(t === undefined ? undefined : t - a);
  const latencyMs = rel(meta.state.finishedAt);
  return {
    id: meta.state.id,
    status: meta.status,
    ...(meta.error ? { error: meta.error } : {}),
    createdAt: new Date(meta.createdAtMs).toISOString(),
    sloMs: ms(meta.state.sloS),
    latencyMs,
    sloMet: latencyMs === null ? null : latencyMs <= (ms(meta.state.sloS) ?? 0),
    stages: meta.state.spec.stages.map((s, index) => ({
      index,
      step: s.step,
      calls: calls
        .filter((c) => c.stageIndex === index)
        .map((c) => ({
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
          ...(c.output !== undefined ? { output: c.output } : {}),
          ...(c.error ? { error: c.error } : {}),
        })),
    })),
  };
}
