/**
 * A WorkflowObject's stage release: renders a DAG stage's prompts from what earlier stages wrote, asks the pool's
 * coordinator to bind the stage (one RPC), and records the calls and their sends before any is sent
 * (workflow-failover.ts sends them). A stage the pool cannot place for now (no healthy instance) waits for the
 * alarm instead of failing; a cancel that lands while the coordinator answers sends the stage nowhere.
 */
import { validateDag, type DagRequest } from "../core/dag";
import { renderDagStage } from "../core/dag-workflow";
import type { Failover } from "./workflow-failover";
import { REDISPATCH_RETRY_MS } from "./workflow-failover";
import type { WorkflowEvents } from "./workflow-events";
import { isLive, type CallRecord, type WorkflowMeta, type WorkflowStore } from "./workflow-store";

export interface ReleaseHost {
  env: Env;
  store: WorkflowStore;
  events: WorkflowEvents;
  failover: Failover;
  meta(): WorkflowMeta | undefined;
  finish(meta: WorkflowMeta, status: "failed", error: { code: string; message: string }): Promise<void>;
  alarmAt(ms: number): Promise<void>;
}

export async function releaseStage(host: ReleaseHost, meta: WorkflowMeta): Promise<void> {
  if (meta.dag !== undefined) renderNextDagStage(meta, meta.dag, host.store.calls());
  const coordinator = host.env.COORDINATOR.getByName(meta.pool);
  const r = await coordinator.releaseStage(meta.state);
  // A cancel may have landed while the coordinator answered: then the stage goes nowhere.
  const now = host.meta();
  if (now !== undefined && !isLive(now)) {
    if (r.ok) await Promise.all(r.dispatched.map((d) => coordinator.callsChanged(d.instanceId, [], [d.call.id])));
    return;
  }
  if (!r.ok && r.error.code === "no_healthy_instance") {
    // Every server is down for now: the stage waits (the alarm retries) rather than fail, up to the watchdog's bound.
    host.store.saveMeta({ ...meta, waiting: r.error.message });
    await host.alarmAt(Date.now() + REDISPATCH_RETRY_MS);
    return;
  }
  if (!r.ok) {
    await host.finish(meta, "failed", r.error);
    return;
  }
  delete meta.waiting;
  meta.state = r.state;
  meta.status = "running";
  meta.progressAtMs = Date.now();
  // The released prompts live in the sends (workflow-failover.ts) until their instances hold them; kept in
  // the meta, every later read and release would carry them.
  for (const c of meta.state.spec.stages[meta.state.stageIndex]?.calls ?? []) {
    delete c.prompt;
    delete c.messages;
  }
  host.store.saveMeta(meta);
  for (const d of r.dispatched) {
    const c = d.call;
    host.store.saveCall({ id: c.id, stageIndex: c.stageIndex, step: c.step, inputTokens: c.inputTokens, outputTokens: c.outputTokens, instanceId: d.instanceId, estimateS: d.estimateS, budgetS: c.budgetS, deadlineS: c.deadlineS, alphaVersion: r.alphaVersion, releasedAt: c.releasedAt, dispatch: 0, failures: [], evacuations: 0 });
    host.store.saveRedispatch({ call: c, avoid: [], bound: { instanceId: d.instanceId, estimateS: d.estimateS, queuePolicy: r.queuePolicy } });
  }
  host.events.released(meta.state, r.dispatched);
  await host.failover.resume();
}

/** A DAG stage's prompts are rendered from what earlier stages wrote, just before it is released. */
function renderNextDagStage(meta: WorkflowMeta, request: DagRequest, calls: readonly CallRecord[]): void {
  const plan = validateDag(request);
  const index = meta.state.stageIndex + 1;
  const stage = meta.state.spec.stages[index];
  if (!plan.ok || stage === undefined) return;
  const outputs: Record<string, string[]> = {};
  for (const c of calls) {
    const id = plan.value.stages[c.stageIndex]?.id;
    if (id !== undefined) (outputs[id] ??= []).push(c.output ?? "");
  }
  stage.calls = renderDagStage(plan.value, index, outputs);
}
