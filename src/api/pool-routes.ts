/**
 * The gateway's side of pool routing (src/core/pool-routing.ts): POOL_ROUTES is parsed once per isolate,
 * and a malformed value answers every routed request with a 500 naming the fault, so a bad deploy shows
 * on its first request instead of sending traffic to the wrong pool.
 */
import { parsePoolRoutes, routePool, type PoolRoutes, type RouteAsk, type RouteDecision } from "../core/pool-routing";

type Parsed = ReturnType<typeof parsePoolRoutes>;

/** Keyed by the raw value: an isolate sees one value, but tests hand the app other environments. */
const cache = new Map<string, Parsed>();

function poolRoutes(env: Env): Parsed {
  // POOL_ROUTES is optional in the type: a deployment with an older wrangler.toml has no such var.
  const raw: string = (env as { POOL_ROUTES?: string }).POOL_ROUTES ?? "";
  let parsed = cache.get(raw);
  if (parsed === undefined) {
    parsed = parsePoolRoutes(raw);
    if (!parsed.ok) console.error(`hexflow misconfigured: ${parsed.message}`);
    cache.set(raw, parsed);
  }
  return parsed;
}

export type Routed = RouteDecision | { ok: false; error: { code: "misconfigured"; message: string } };

/** The routes in force, or the configuration error every routed request answers with. */
export function configuredRoutes(env: Env): { ok: true; value: PoolRoutes } | { ok: false; error: { code: "misconfigured"; message: string } } {
  const r = poolRoutes(env);
  return r.ok ? r : { ok: false, error: { code: "misconfigured", message: r.message } };
}

/** The pool this request runs on, or why none (unknown_model: 400; misconfigured: 500). */
export function routeRequest(env: Env, ask: RouteAsk): Routed {
  const routes = configuredRoutes(env);
  return routes.ok ? routePool(routes.value, ask) : routes;
}

export const routedStatus = (e: Extract<Routed, { ok: false }>["error"]): 400 | 500 => (e.code === "unknown_model" ? 400 : 500);
