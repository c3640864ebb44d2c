/**
 * A WorkflowObject's trace: once the workflow has ended, its alarm writes it to D1 (src/db/traces.ts),
 * so neither the completion report nor the caller ever waits on D1. Whether it is written lives in
 * the object's own storage, next to its meta record, so an alarm that runs again writes nothing twice.
 */
import { z } from "zod";
import { MAX_TRACE_ATTEMPTS, TRACE_RETENTION, traceRows } from "../core/trace-rows";
import { pruneTraces, recordWorkflowTrace } from "../db/traces";
import { DEFAULT_TENANT } from "./names";
import type { CallRecord, WorkflowMeta } from "./workflow-store";

const TraceStateSchema = z.object({ traced: z.boolean(), attempts: z.number().int() });
type TraceState = z.infer<typeof TraceStateSchema>;

const KEY = "trace";

function load(sql: SqlStorage): TraceState | undefined {
  const row = sql.exec<{ json: string }>("SELECT json FROM meta WHERE key = ?", KEY).toArray()[0];
  return row === undefined ? undefined : TraceStateSchema.parse(JSON.parse(row.json));
}

function save(sql: SqlStorage, s: TraceState): void {
  sql.exec("INSERT OR REPLACE INTO meta (key, json) VALUES (?, ?)", KEY, JSON.stringify(s));
}

/** Called as the workflow ends: the trace is owed, and the alarm (set by the caller) will write it. */
export function traceOwed(sql: SqlStorage): void {
  if (load(sql) === undefined) save(sql, { traced: false, attempts: 0 });
}

const ended = (status: WorkflowMeta["status"]): status is "succeeded" | "failed" | "cancelled" => status === "succeeded" || status === "failed" || status === "cancelled";

/**
 * Writes the trace if the workflow has ended and it is owed. A D1 failure throws, so the runtime retries
 * the alarm; after MAX_TRACE_ATTEMPTS the trace is given up, with one log line, rather than retried forever.
 */
export async function writeTraceIfOwed(env: Env, sql: SqlStorage, meta: WorkflowMeta | undefined, calls: () => CallRecord[]): Promise<void> {
  const state = load(sql);
  if (meta === undefined || state === undefined || state.traced || !ended(meta.status)) return;
  if (state.attempts >= MAX_TRACE_ATTEMPTS) {
    console.error(`workflow ${meta.state.id}: trace not written after ${state.attempts} attempts; giving up`);
    save(sql, { traced: true, attempts: state.attempts });
    return;
  }
  save(sql, { traced: false, attempts: state.attempts + 1 });
  const pool = await env.COORDINATOR.getByName(meta.pool).pool();
  const gpus = new Map(pool.instances.map((i) => [i.id, i.gpu]));
  const nowMs = Date.now();
  const rows = traceRows(
    {
      id: meta.state.id,
      kind: meta.state.spec.kind,
      status: meta.status,
      pool: meta.pool,
      arrivalS: meta.state.arrivalS,
      sloS: meta.state.sloS,
      finishedAt: meta.state.finishedAt,
      createdAtMs: meta.createdAtMs,
      errorCode: meta.error?.code,
    },
    calls(),
    { tenant: meta.text2sql?.tenant ?? DEFAULT_TENANT, policy: pool.policy, gpuOf: (id) => gpus.get(id) ?? null, nowMs },
  );
  await recordWorkflowTrace(env.TRACES, rows);
  save(sql, { traced: true, attempts: state.attempts + 1 });
  // Without a cron to do it, about one workflow end in pruneOneIn keeps the tables bounded.
  if (Math.random() * TRACE_RETENTION.pruneOneIn < 1) {
    await pruneTraces(env.TRACES, { maxAgeMs: TRACE_RETENTION.maxAgeMs, maxRows: TRACE_RETENTION.maxRows, nowMs }).catch((e: unknown) => console.error("pruning traces failed", e));
  }
}
