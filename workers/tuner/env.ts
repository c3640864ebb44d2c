import type { CoordinatorObject } from "../../src/objects/coordinator";

/**
 * The tuner's bindings (workers/tuner/wrangler.toml), written by hand: `wrangler types` would declare a
 * second global `Env` that clashes with the gateway's in the one TypeScript program that checks both.
 */
export interface TunerEnv {
  TRACES: D1Database;
  /** The gateway's coordinators (script_name = "hexflow-gateway"). */
  COORDINATOR: DurableObjectNamespace<CoordinatorObject>;
  /** Guards POST /tune (`wrangler secret put ADMIN_TOKEN`, the gateway's value). */
  ADMIN_TOKEN?: string;
  /** JSON overrides of the tuning config (src/sim/tuning-decision.ts TuningConfigSchema). */
  TUNING_CONFIG?: string;
  /** Comma-separated pools the cron always tunes, besides those with traces in the window. */
  TUNER_POOLS?: string;
}
