import { z } from "zod";
import { insertDecision, type DecisionView, type NewDecision, type TuneReason } from "../../src/db/tuning-decisions";
import { arrivalRate, CallTraceRowSchema, rebuildWindow, WorkflowTraceRowSchema } from "../../src/sim/trace-window";
import { decideAlpha, TuningConfigSchema, type TuningConfig } from "../../src/sim/tuning-decision";
import type { TunerEnv } from "./env";

export type ConfigResult = { ok: true; value: TuningConfig } | { ok: false; error: string };

export function tuningConfig(env: TunerEnv): ConfigResult {
  if (env.TUNING_CONFIG === undefined || env.TUNING_CONFIG.trim() === "") return { ok: true, value: TuningConfigSchema.parse({}) };
  try {
    const parsed = TuningConfigSchema.safeParse(JSON.parse(env.TUNING_CONFIG));
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: `TUNING_CONFIG: ${z.prettifyError(parsed.error)}` };
  } catch {
    return { ok: false, error: "TUNING_CONFIG is not valid JSON" };
  }
}

/**
 * D1 fails a query now and then: in production a dropped connection, locally the SQLITE_BUSY of two
 * workerd processes (gateway and tuner) sharing one SQLite file while the gateway writes traces. A
 * failed statement changed nothing, so it is tried again, a few times, with backoff.
 */
export async function retried<T>(what: string, run: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (e) {
      if (i >= attempts) throw e;
      console.warn(`${what} failed (attempt ${i} of ${attempts}), retrying: ${e instanceof Error ? e.message : String(e)}`);
      await new Promise((r) => setTimeout(r, 100 * 3 ** (i - 1)));
    }
  }
}

/** The window is chosen by recording time (wall clock): arrival_s is pool time, which may be emulated. */
const WINDOW_WORKFLOWS = `SELECT workflow_id FROM workflow_traces WHERE pool = ?1 AND recorded_at_ms >= ?2 ORDER BY arrival_s DESC LIMIT ?3`;

async function readWindow(db: D1Database, pool: string, sinceMs: number, max: number) {
  const [wf, calls] = await db.batch([
    db.prepare(`SELECT workflow_id, arrival_s, slo_s FROM workflow_traces WHERE workflow_id IN (${WINDOW_WORKFLOWS})`).bind(pool, sinceMs, max),
    db.prepare(`SELECT call_id, workflow_id, stage_index, step, input_tokens, output_tokens FROM call_traces WHERE workflow_id IN (${WINDOW_WORKFLOWS})`).bind(pool, sinceMs, max),
  ]);
  const workflows = z.array(WorkflowTraceRowSchema).parse(wf?.results ?? []);
  const window = rebuildWindow(workflows, z.array(CallTraceRowSchema).parse(calls?.results ?? []));
  // The rebuilt window starts at 0; the history keeps the pool-clock span it covered.
  const arrivals = workflows.map((w) => w.arrival_s);
  return { window, startS: arrivals.length > 0 ? Math.min(...arrivals) : null, endS: arrivals.length > 0 ? Math.max(...arrivals) : null };
}

/** Pools with workflows recorded in the window. */
export async function poolsWithTraces(db: D1Database, sinceMs: number): Promise<string[]> {
  const { results } = await db.prepare("SELECT DISTINCT pool FROM workflow_traces WHERE recorded_at_ms >= ?").bind(sinceMs).all();
  return z.array(z.object({ pool: z.string() })).parse(results).map((r) => r.pool);
}

/**
 * Workers freeze the clock during computation and move it on at the next I/O event, so the time
 * spent simulating shows only after yielding to a timer.
 */
const clockAfterCompute = (): Promise<number> => new Promise((resolve) => setTimeout(() => resolve(performance.now()), 0));

/**
 * One tuning of one pool: read the window, rebuild it, simulate the α grid, install when the gain
 * beats the threshold, and record the decision whatever it was.
 */
export async function tunePool(env: TunerEnv, pool: string, reason: TuneReason, config: TuningConfig, nowMs = Date.now()): Promise<DecisionView> {
  const coordinator = env.COORDINATOR.getByName(pool);
  const ctx = await coordinator.tuningContext();
  const base = { pool, atMs: nowMs, reason, currentAlpha: ctx.alpha, alphaVersion: ctx.alphaVersion, installed: false };
  let record: NewDecision;
  if (ctx.pinned) {
    record = { ...base, windowStartS: null, windowEndS: null, workflows: 0, arrivalRate: null, bestAlpha: null, gain: null, skipped: "α is pinned", curve: [], cpuMs: null };
  } else {
    const { window, startS, endS } = await retried("reading the trace window", () => readWindow(env.TRACES, pool, nowMs - config.windowS * 1000, config.maxWorkflows));
    const t0 = performance.now();
    const d = decideAlpha({ window, instances: ctx.instances, policy: ctx.policy, alpha: ctx.alpha, config });
    const cpuMs = d.skipped === undefined ? (await clockAfterCompute()) - t0 : null;
    record = {
      ...base,
      windowStartS: startS,
      windowEndS: endS,
      workflows: window.length,
      arrivalRate: arrivalRate(window),
      bestAlpha: d.skipped === undefined ? d.bestAlpha : null,
      gain: d.skipped === undefined ? d.gain : null,
      skipped: d.skipped ?? null,
      curve: d.curve,
      cpuMs,
    };
    if (d.install) {
      const r = await coordinator.installAlpha(d.bestAlpha, ctx.alphaVersion);
      // The row has no column for a refusal; `skipped` carries it, with a prefix that says so.
      record = r.ok ? { ...record, installed: true, alphaVersion: r.value.alphaVersion } : { ...record, skipped: `install refused: ${r.error.message}` };
    }
  }
  // Recorded first: the decision stands whatever happens to the notification below.
  const id = await retried("recording the decision", () => insertDecision(env.TRACES, record));
  await notifyDone(coordinator, pool);
  return { id, ...record };
}

/**
 * Tells the coordinator that a tuning ended (whatever it decided), e.g. so that its degradation trigger
 * takes the current latencies as its new reference. A failure is logged, never thrown: the decision is
 * already recorded and must be returned.
 */
async function notifyDone(coordinator: { tuningDone(): unknown }, pool: string): Promise<void> {
  try {
    await coordinator.tuningDone();
  } catch (e) {
    console.error(`tuning pool ${pool}: the coordinator's tuningDone() failed (the decision is recorded)`, e);
  }
}
