/**
 * Drives a text2sql workflow between its stages, inside the WorkflowObject's alarm: feeds the finished
 * stage's outputs to the run (src/core/text2sql/run.ts), runs the SQL it asks for on the registered
 * database, and releases the stage it chooses or ends the workflow. Every step is saved before the next
 * await, and each entry point is decided from storage, so an alarm that runs again (after a restart, or
 * twice) resumes where the last one stopped instead of repeating or skipping a stage.
 */
import { onExecuted, onStageDone, pendingExecution, type ExecOutcome, type Text2SqlAction } from "../core/text2sql/run";
import { STATEMENT_TIMEOUT_MS } from "../core/text2sql/run-state";
import { executeSql } from "../db/execute";
import type { WorkflowEvents } from "./workflow-events";
import type { Text2SqlMeta, WorkflowMeta, WorkflowStore } from "./workflow-store";

export interface Text2SqlHost {
  env: Env;
  store: WorkflowStore;
  events: WorkflowEvents;
  release(meta: WorkflowMeta): Promise<void>;
  finish(meta: WorkflowMeta, status: "succeeded" | "failed", error?: { code: string; message: string }): Promise<void>;
}

/** The database is looked up at each batch, so a registration deleted mid-run fails the run with that reason. */
async function runQueries(env: Env, t: Text2SqlMeta, queries: readonly { sql: string }[], maxRows: number): Promise<ExecOutcome[]> {
  const record = await env.CATALOG.getByName(t.tenant).get(t.run.database);
  if (!record.ok) {
    const error = { code: "database_unavailable", message: `database "${t.run.database}" is no longer registered` };
    return queries.map(() => ({ ok: false, error }));
  }
  const { target, schema } = record.value;
  return Promise.all(queries.map((q) => executeSql(env, target, schema.dialect, q.sql, { maxRows, timeoutMs: STATEMENT_TIMEOUT_MS })));
}

/** Whether the workflow is still running in storage: a cancel may land while this awaits a database. */
function stillRunning(host: Text2SqlHost): boolean {
  return host.store.meta()?.status === "running";
}

export async function advanceText2Sql(host: Text2SqlHost, meta: WorkflowMeta, t: Text2SqlMeta): Promise<void> {
  const state = meta.state;
  let action: Text2SqlAction | undefined = pendingExecution(t.run);
  if (action === undefined && t.consumed < state.stageIndex) {
    t.consumed = state.stageIndex;
    action = onStageDone(t.run, host.store.outputs(state.stageIndex));
  }
  if (action === undefined) {
    // A stage the run chose before a restart, saved but not yet released.
    if (state.stageIndex < state.spec.stages.length - 1) await host.release(meta);
    return;
  }
  while (action.kind === "execute") {
    host.store.saveMeta(meta);
    const started = Date.now();
    const results = await runQueries(host.env, t, action.queries, action.maxRows);
    if (!stillRunning(host)) return;
    t.executions.push({ phase: t.run.phase, queries: action.queries.length, elapsedMs: Date.now() - started });
    action = onExecuted(t.run, results);
  }
  if (action.kind === "stage") {
    state.spec.stages.push(action.stage);
    host.store.saveMeta(meta);
    if (t.run.phase === "revise") host.events.correctionRound(t.run);
    await host.release(meta);
  } else if (action.kind === "done") {
    state.finishedAt = (await host.env.COORDINATOR.getByName(meta.pool).clock()).nowS;
    if (stillRunning(host)) await host.finish(meta, "succeeded");
  } else {
    await host.finish(meta, "failed", action.error);
  }
}
