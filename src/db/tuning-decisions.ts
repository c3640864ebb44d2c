/** The α history: tuning_decisions rows of the TRACES database (migrations/0001_traces.sql). */
import { z } from "zod";
import { tuningIncrement } from "../core/metric-increments";
import { CurvePointSchema, type CurvePoint } from "../sim/tuning-decision";
import { addPool, bumpCounters } from "./metric-counters";

export const TuneReasonSchema = z.enum(["cron", "degradation", "manual"]);
export type TuneReason = z.infer<typeof TuneReasonSchema>;

/** One decision as the admin API shows it; the tuner returns the same shape. */
export interface DecisionView {
  id: number;
  pool: string;
  atMs: number;
  reason: string;
  windowStartS: number | null;
  windowEndS: number | null;
  workflows: number;
  arrivalRate: number | null;
  currentAlpha: number;
  bestAlpha: number | null;
  gain: number | null;
  installed: boolean;
  alphaVersion: number | null;
  skipped: string | null;
  curve: CurvePoint[];
  cpuMs: number | null;
}

export type NewDecision = Omit<DecisionView, "id">;

const DecisionRowSchema = z.object({
  id: z.number().int(),
  pool: z.string(),
  at_ms: z.number(),
  reason: z.string(),
  window_start_s: z.number().nullable(),
  window_end_s: z.number().nullable(),
  workflows: z.number().int(),
  arrival_rate: z.number().nullable(),
  current_alpha: z.number(),
  best_alpha: z.number().nullable(),
  gain: z.number().nullable(),
  installed: z.number().int(),
  alpha_version: z.number().int().nullable(),
  skipped: z.string().nullable(),
  curve: z.string(),
  cpu_ms: z.number().nullable(),
});

/** NaN (no P95 on an empty run) is not JSON; the history stores and shows null instead. */
const finite = (x: number | null): number | null => (x !== null && Number.isFinite(x) ? x : null);

function curveOf(text: string): CurvePoint[] {
  const parsed = z.array(CurvePointSchema).safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : [];
}

/** The decision and its /metrics counter in one batch, so the count is that of the rows. */
export async function insertDecision(db: D1Database, d: NewDecision): Promise<number> {
  const insert = db
    .prepare(
      `INSERT INTO tuning_decisions (pool, at_ms, reason, window_start_s, window_end_s, workflows, arrival_rate, current_alpha, best_alpha, gain, installed, alpha_version, skipped, curve, cpu_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .bind(d.pool, d.atMs, d.reason, finite(d.windowStartS), finite(d.windowEndS), d.workflows, finite(d.arrivalRate), d.currentAlpha, finite(d.bestAlpha), finite(d.gain), d.installed ? 1 : 0, d.alphaVersion, d.skipped, JSON.stringify(d.curve), finite(d.cpuMs));
  const results = await db.batch([bumpCounters(db, [tuningIncrement(d)]), addPool(db, d.pool), insert]);
  const row = z.object({ id: z.number().int() }).safeParse(results[2]?.results[0]);
  if (!row.success) throw new Error("tuning_decisions: INSERT returned no id");
  return row.data.id;
}

/** Newest first. */
export async function listDecisions(db: D1Database, pool: string, limit: number): Promise<DecisionView[]> {
  const { results } = await db.prepare("SELECT * FROM tuning_decisions WHERE pool = ? ORDER BY at_ms DESC, id DESC LIMIT ?").bind(pool, limit).all();
  return results.map((raw) => {
    const r = DecisionRowSchema.parse(raw);
    return {
      id: r.id,
      pool: r.pool,
      atMs: r.at_ms,
      reason: r.reason,
      windowStartS: r.window_start_s,
      windowEndS: r.window_end_s,
      workflows: r.workflows,
      arrivalRate: r.arrival_rate,
      currentAlpha: r.current_alpha,
      bestAlpha: r.best_alpha,
      gain: r.gain,
      installed: r.installed === 1,
      alphaVersion: r.alpha_version,
      skipped: r.skipped,
      curve: curveOf(r.curve),
      cpuMs: r.cpu_ms,
    };
  });
}
