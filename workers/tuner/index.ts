import { TRACE_RETENTION } from "../../src/core/trace-rows";
import { pruneTraces } from "../../src/db/traces";
import { TuneReasonSchema } from "../../src/db/tuning-decisions";
import { PoolNameSchema } from "../../src/api/schemas";
import type { TunerEnv } from "./env";
import { poolsWithTraces, retried, tunePool, tuningConfig } from "./tune";

export { tunePool } from "./tune";

const json = (body: unknown, status = 200): Response => Response.json(body, { status });
const error = (code: string, message: string, status: number): Response => json({ error: { code, message } }, status);

/** Constant-time comparison, so response timing says nothing about the token. */
function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

/** The pools one cron run tunes: those with traffic in the window, plus any configured ones. */
async function cronPools(env: TunerEnv, sinceMs: number): Promise<string[]> {
  const configured = (env.TUNER_POOLS ?? "").split(",").map((p) => p.trim()).filter((p) => p.length > 0);
  return [...new Set([...configured, ...(await retried("listing the pools with traces", () => poolsWithTraces(env.TRACES, sinceMs)))])];
}

/** Trace retention, once per cron run (the gateway also prunes now and then): logged, never fatal. */
async function pruneOldTraces(env: TunerEnv, nowMs: number): Promise<void> {
  try {
    const r = await pruneTraces(env.TRACES, { maxAgeMs: TRACE_RETENTION.maxAgeMs, maxRows: TRACE_RETENTION.maxRows, nowMs });
    if (r.workflows > 0 || r.calls > 0) console.log(`pruned ${r.workflows} workflow and ${r.calls} call traces`);
  } catch (e) {
    console.error("pruning traces failed", e);
  }
}

/** One cron run over every pool; a pool that fails does not keep the others from being tuned. */
async function tuneAll(controller: ScheduledController, env: TunerEnv): Promise<void> {
  const config = tuningConfig(env);
  if (!config.ok) throw new Error(config.error);
  const pools = await cronPools(env, controller.scheduledTime - config.value.windowS * 1000);
  // One pool at a time: each tuning is CPU-bound, so running them together would not finish sooner.
  // The run still ends as failed when one did.
  const failures: unknown[] = [];
  for (const pool of pools) {
    try {
      await tunePool(env, pool, "cron", config.value, controller.scheduledTime);
    } catch (e) {
      console.error(`tuning pool ${pool} failed`, e);
      failures.push(e);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${pools.length} pools failed to tune`);
}

/**
 * The tuner: a cron over every pool, and `POST /tune?pool=&reason=` for the gateway's admin route and
 * the coordinator's degradation trigger. It runs apart from the gateway so its simulations never take
 * CPU from requests.
 */
export default {
  async scheduled(controller, env) {
    // Tuning first (it reads the recent window), then pruning, which runs even when tuning failed.
    try {
      await tuneAll(controller, env);
    } finally {
      await pruneOldTraces(env, controller.scheduledTime);
    }
  },

  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/tune") return error("not_found", "no such route", 404);
    if (request.method !== "POST") return error("method_not_allowed", "use POST", 405);
    const token = env.ADMIN_TOKEN;
    if (typeof token !== "string" || token.length < 16) return error("unavailable", "the tuner is disabled: set ADMIN_TOKEN (16+ characters)", 503);
    const given = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    if (!sameSecret(given, token)) return error("unauthorized", "admin credential required", 401);
    const pool = PoolNameSchema.safeParse(url.searchParams.get("pool") ?? "default");
    if (!pool.success) return error("invalid_request", "pool: not a valid pool name", 400);
    const reason = TuneReasonSchema.safeParse(url.searchParams.get("reason") ?? "manual");
    if (!reason.success) return error("invalid_request", 'reason must be "manual", "degradation" or "cron"', 400);
    const config = tuningConfig(env);
    if (!config.ok) return error("unavailable", config.error, 503);
    return json(await tunePool(env, pool.data, reason.data, config.value));
  },
} satisfies ExportedHandler<TunerEnv>;
