/**
 * What an ended WorkflowObject owes, paid from its alarm so neither the completion report nor the
 * caller ever waits: its tenant's concurrency slot (src/objects/tenant.ts), its end to the coordinator
 * (the pool's admission control and, for a success, the degradation trigger's latency sample, pool-health.ts)
 * and its trace to D1 (src/db/traces.ts). What was paid lives in the object's own storage, next to
 * its meta record, so an alarm that runs again pays nothing twice.
 */
import { z } from "zod";
import { MAX_TRACE_ATTEMPTS, TRACE_RETENTION, traceRows } from "../core/trace-rows";
import { pruneTraces, recordWorkflowTrace } from "../db/traces";
import { ownSloS, type CallRecord, type WorkflowMeta } from "./workflow-store";

// `sampled` and `released` default for state written before they existed.
const TraceStateSchema = z.object({ traced: z.boolean(), attempts: z.number().int(), sampled: z.boolean().default(false), released: z.boolean().default(false) });
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
  if (load(sql) === undefined) save(sql, { traced: false, attempts: 0, sampled: false, released: false });
}

const ended = (status: WorkflowMeta["status"]): status is "succeeded" | "failed" | "cancelled" => status === "succeeded" || status === "failed" || status === "cancelled";

/**
 * Writes the trace if the workflow has ended and it is owed. A D1 failure throws, so the runtime retries
 * the alarm; after MAX_TRACE_ATTEMPTS the trace is given up, with one log line, rather than retried forever.
 */
export async function writeTraceIfOwed(env: Env, sql: SqlStorage, meta: WorkflowMeta | undefined, calls: () => CallRecord[]): Promise<void> {
  let state = load(sql);
  if (meta === undefined || state === undefined || !ended(meta.status)) return;
  if (!state.released) {
    // Must land, or the tenant loses a slot until its lease runs out: a failure throws and the alarm runs again.
    await env.TENANT.getByName(meta.tenant).release(meta.state.id);
    state = { ...state, released: true };
    save(sql, state);
  }
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
  const records = calls();
  const rows = traceRows(
    {
      id: meta.state.id,
      kind: meta.state.spec.kind,
      status: meta.status,
      pool: meta.pool,
      arrivalS: meta.state.arrivalS,
      sloS: ownSloS(meta),
      finishedAt: meta.state.finishedAt,
      createdAtMs: meta.createdAtMs,
      errorCode: meta.error?.code,
    },
    records,
    { tenant: meta.tenant, policy: pool.policy, gpuOf: (id) => gpus.get(id) ?? null, nowMs },
  );
  await recordWorkflowTrace(env.TRACES, rows, new Map(records.flatMap((c) => (c.laxityS === undefined ? [] : [[c.id, c.laxityS] as const]))));
  save(sql, { ...state, traced: true, attempts: state.attempts + 1 });
  // Without a cron to do it, about one workflow end in pruneOneIn keeps the tables bounded.
  if (Math.random() * TRACE_RETENTION.pruneOneIn < 1) {
    await pruneTraces(env.TRACES, { maxAgeMs: TRACE_RETENTION.maxAgeMs, maxRows: TRACE_RETENTION.maxRows, nowMs }).catch((e: unknown) => console.error("pruning traces failed", e));
  }
}

/**
 * Every end frees the workflow's reserved work in the pool's admission control; a latency sample goes
 * with succeeded workflows only: a failed one's latency says when it failed, not how fast the pool serves
 * (failures are counted in the traces). At most once; a coordinator that cannot be reached loses the
 * report rather than holding up the trace (admission forgets a reservation past its deadline anyway).
 */
async function sample(env: Env, sql: SqlStorage, meta: WorkflowMeta, state: TraceState): Promise<TraceState> {
  const { finishedAt, arrivalS } = meta.state;
  const sloS = ownSloS(meta);
  const next = { ...state, sampled: true };
  save(sql, next);
  const latencyS = finishedAt === undefined ? undefined : finishedAt - arrivalS;
  const latency = meta.status === "succeeded" && finishedAt !== undefined && latencyS !== undefined ? { atS: finishedAt, latencyS: Math.max(0, latencyS), sloS, met: latencyS <= sloS } : null;
  await env.COORDINATOR.getByName(meta.pool)
    .workflowEnded(meta.state.id, latency)
    .catch((e: unknown) => console.error(`workflow ${meta.state.id}: end not reported to the coordinator`, e));
  return next;
}
