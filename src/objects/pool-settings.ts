import { z } from "zod";
import type { InstanceRecord } from "../core/pool";

// Settings stored before `pinned` existed parse with its default, so the schema stays backward compatible.
export const SettingsSchema = z.object({ pool: z.string(), policy: z.string(), alpha: z.number().min(0).max(1), alphaVersion: z.number().int(), timeScale: z.number().positive().nullable(), pinned: z.boolean().default(false) });
export type Settings = z.infer<typeof SettingsSchema>;
/** α 0.7: what the tuner finds for hexgen on the reference pool and traces (docs/benchmarks.md). */
export const DEFAULTS: Settings = { pool: "default", policy: "hexgen", alpha: 0.7, alphaVersion: 1, timeScale: null, pinned: false };

/** `pinned: true` fixes α: the tuner then records its decisions but installs nothing. */
export const PolicyUpdateSchema = z.object({ policy: z.string().optional(), alpha: z.number().min(0).max(1).optional(), pinned: z.boolean().optional() }).strict();

/** What the tuner needs to simulate the pool as it is now. */
export interface TuningContext {
  pool: string;
  policy: string;
  alpha: number;
  alphaVersion: number;
  pinned: boolean;
  instances: InstanceRecord[];
}
