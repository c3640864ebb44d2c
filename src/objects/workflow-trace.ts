/**
 * What an ended WorkflowObject owes, paid from its alarm so neither the completion report nor the
 * caller ever waits: its latency sample to the coordinator (the degradation trigger, pool-health.ts)
 * and its trace to D1 (src/db/traces.ts). What was paid lives in the object's own storage, next to
 * its meta record, so an alarm that runs again pays nothing twice.
 */
import { z } from "zod";
import { MAX_TRACE_ATTEMPTS, TRACE_RETENTION, traceRows } from "../core/trace-rows";
import { pruneTraces, recordWorkflowTrace } from "../db/traces";
import { DEFAULT_TENANT } from "./names";
import type { CallRecord, WorkflowMeta } from "./workflow-store";

// `sampled` defaults for state written before the trigger existed.
const TraceStateSchema = z.object({ traced: z.boolean(), attempts: z.number().int(), sampled: z.boolean().default(false) });
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
  if (load(sql) === undefined) save(sql, { traced: false, attempts: 0, sampled: false });
}

const ended = (status: WorkflowMeta["status"]): status is "succeeded" | "failed" | "cancelled" => status === "succeeded" || status === "failed" || status === "cancelled";

/**
 * Writes the trace if the workflow has ended and it is owed. A D1 failure throws, so the runtime retries
 * the alarm; after MAX_TRACE_ATTEMPTS the trace is given up, with one log line, rather than retried forever.
 */
export async function writeTraceIfOwed(env: Env, sql: SqlStorage, meta: WorkflowMeta | undefined, calls: () => CallRecord[]): Promise<void> {
  let state = load(sql);
  if (meta === undefined || state === undefined || !ended(meta.status)) return;
  if (!state.sampled) state = await sample(env, sql, meta, state);
  if (state.traced) return;
  if (state.attempts >= MAX_TRACE_ATTEMPTS) {
    console.error(`workflow ${meta.state.id}: trace not written after ${state.attempts} attempts; giving up`);
    save(sql, { ...state, traced: true });
    return;
  }
  save(sql, { ...state, attempts: state.attempts + 1 });
  // The registry and policy only: the full pool view would build a scheduler and load figures for nothing.
  const pool = await env.COORDINATOR.getByName(meta.pool).tuningContext();
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
  save(sql, { ...state, traced: true, attempts: state.attempts + 1 });
  // Without a cron to do it, about one workflow end in pruneOneIn keeps the tables bounded.
  if (Math.random() * TRACE_RETENTION.pruneOneIn < 1) {
    await pruneTraces(env.TRACES, { maxAgeMs: TRACE_RETENTION.maxAgeMs, maxRows: TRACE_RETENTION.maxRows, nowMs }).catch((e: unknown) => console.error("pruning traces failed", e));
  }
}

/**
 * Succeeded workflows only: a failed one's latency says when it failed, not how fast the pool serves
 * (failures are counted in the traces). At most once; a coordinator that cannot be reached loses
 * one sample rather than holding up the trace.
 */
async function sample(env: Env, sql: SqlStorage, meta: WorkflowMeta, state: TraceState): Promise<TraceState> {
  const { finishedAt, arrivalS, sloS } = meta.state;
  const next = { ...state, sampled: true };
  save(sql, next);
  if (meta.status !== "succeeded" || finishedAt === undefined) return next;
  const latencyS = finishedAt - arrivalS;
  await env.COORDINATOR.getByName(meta.pool)
    .workflowEnded({ atS: finishedAt, latencyS: Math.max(0, latencyS), sloS, met: latencyS <= sloS })
    .catch((e: unknown) => console.error(`workflow ${meta.state.id}: latency sample not delivered`, e));
  return next;
}
