import { z } from "zod";
import type { InstanceRecord } from "../core/pool";
import type { LoadTracker } from "../core/load";
import type { WorkflowAdmission } from "../core/workflow-admission";
import { HealthConfigSchema, type InstanceHealth } from "../core/instance-health";
import type { HealthMonitor } from "./health-monitor";
import type { CalibrationView, DegradationView, PoolHealth } from "./pool-health";

/**
 * Whether the self-calibrated cost models price calls (`apply`: the dispatcher and the tuner use them)
 * or are only fitted and shown (`observe`, the default). Observe by default because on the emulated
 * fleet near capacity the fit drifted to its bounds (decode ×0.25-×4 on servers that follow their
 * profiles; docs/tuning.md), and wrong prices hurt more than the profile's.
 */
export const CalibrationModeSchema = z.enum(["observe", "apply"]);
/**
 * Whether the pool refuses (or runs best-effort) workflows it predicts would miss their deadline. `off` is
 * for measuring a scheduler alone (the benchmarks compare policies on every workflow, admitted or not).
 */
export const AdmissionModeSchema = z.enum(["enforce", "off"]);
// Settings stored before `pinned` and `calibration` existed parse with their defaults, so the schema stays backward compatible.
export const SettingsSchema = z.object({
  pool: z.string(),
  policy: z.string(),
  alpha: z.number().min(0).max(1),
  alphaVersion: z.number().int(),
  timeScale: z.number().positive().nullable(),
  pinned: z.boolean().default(false),
  calibration: CalibrationModeSchema.default("observe"),
  admission: AdmissionModeSchema.default("enforce"),
  /** Overrides of the instance health defaults (core/instance-health HEALTH_DEFAULTS). */
  health: HealthConfigSchema.partial().optional(),
});
export type Settings = z.infer<typeof SettingsSchema>;
/** α 0.7: what the tuner finds for hexgen on the reference pool and traces (docs/benchmarks.md). */
export const DEFAULTS: Settings = { pool: "default", policy: "hexgen", alpha: 0.7, alphaVersion: 1, timeScale: null, pinned: false, calibration: "observe", admission: "enforce" };

/** `pinned: true` fixes α: the tuner then records its decisions but installs nothing. */
export const PolicyUpdateSchema = z.object({ policy: z.string().optional(), alpha: z.number().min(0).max(1).optional(), pinned: z.boolean().optional(), calibration: CalibrationModeSchema.optional(), admission: AdmissionModeSchema.optional(), health: HealthConfigSchema.partial().strict().optional() }).strict();

/** The pool as the admin sees it: settings, base SLO, and each instance with its load and calibration. */
export interface PoolView {
  policy: string;
  alpha: number;
  alphaVersion: number;
  pinned: boolean;
  calibration: "observe" | "apply";
  admission: "enforce" | "off";
  /** The admission predictor as it stands: the pool's rate μ (estimated s/s), the committed work, workflows in flight. */
  admissionState: { rateS: number; committedS: number; inFlight: number } | null;
  timeScale: number | null;
  baseSloS: number | null;
  instances: (InstanceRecord & { loadS: number; queued: number; running: number; calibration: CalibrationView; health: InstanceHealth })[];
  degradation: DegradationView;
}

export function poolView(s: Settings, records: readonly InstanceRecord[], loads: LoadTracker | undefined, health: PoolHealth, monitor: HealthMonitor, nowS: number, baseSloS: number | null, admission: WorkflowAdmission | undefined): PoolView {
  return {
    ...s,
    admissionState: admission === undefined ? null : { rateS: admission.rateS, committedS: admission.committedS, inFlight: admission.inFlight },
    baseSloS,
    instances: records.map((r) => ({
      ...r,
      loadS: loads?.load(r.id, nowS) ?? 0,
      ...(loads?.counts(r.id) ?? { queued: 0, running: 0 }),
      calibration: health.calibrationView(r.id, r.cost),
      health: monitor.view(r.id),
    })),
    degradation: health.degradationView(),
  };
}

/** What the tuner needs to simulate the pool as it is now. */
export interface TuningContext {
  pool: string;
  policy: string;
  alpha: number;
  alphaVersion: number;
  pinned: boolean;
  instances: InstanceRecord[];
}

/** The coordinator's SQLite schema (sqlite.ts migrate): migration i takes version i to i + 1. */
export const COORDINATOR_MIGRATIONS = [
  `CREATE TABLE instances (id TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE outstanding (call_id TEXT PRIMARY KEY, instance_id TEXT NOT NULL, estimate REAL NOT NULL, started_at REAL)`,
  // v2: outstanding load lives in memory (rebuilt from the instances after a restart), so a stage
  // release writes nothing and its RPC to the instance does not wait for a storage commit.
  `DROP TABLE outstanding`,
  // v3: pool health (pool-health.ts): calibrated cost models per instance, the degradation windows.
  `CREATE TABLE calibration (instance_id TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE health (key TEXT PRIMARY KEY, json TEXT NOT NULL)`,
  // v4: each instance's dispatch health (health-monitor.ts), so a restart does not dispatch to a dead server.
  `CREATE TABLE instance_health (instance_id TEXT PRIMARY KEY, json TEXT NOT NULL)`,
];

export function loadSettings(sql: SqlStorage): Settings {
  const row = sql.exec<{ value: string }>("SELECT value FROM settings WHERE key = 'pool'").toArray()[0];
  return row === undefined ? DEFAULTS : SettingsSchema.parse(JSON.parse(row.value));
}

export function saveSettings(sql: SqlStorage, s: Settings): void {
  sql.exec("INSERT OR REPLACE INTO settings (key, value) VALUES ('pool', ?)", JSON.stringify(s));
}
