/**
 * Which pool a request runs on when it names none: the POOL_ROUTES configuration (wrangler.toml vars) maps
 * a model to the pool whose coordinator serves it, so one deployment runs several coordinators (one per
 * model or region: docs/scaling.md) and a client only says which model it wants.
 */
import { z } from "zod";
import { DEFAULT_MODEL } from "./gpu";

/** The one pool-name pattern: a pool name is also a Durable Object name and a URL path segment. */
export const POOL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Model ids as vLLM serves them (`llama-3.1-70b`, `meta-llama/Llama-3.1-70B-Instruct`, `org/model:tag`). */
const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
/** The key of the default pool's entry, in either form of POOL_ROUTES. */
export const DEFAULT_ROUTE = "*";

const PoolSchema = z.string().regex(POOL_NAME_PATTERN, "a pool name: lowercase letters, digits and dashes, at most 63");
const ModelSchema = z.string().regex(MODEL_ID_PATTERN, "a model id: letters, digits and . _ : / -, at most 128");

export const PoolRoutesSchema = z.strictObject({
  routes: z.record(ModelSchema, PoolSchema),
  /** Where a request for a model the routes do not name goes; null refuses it (unknown_model). */
  defaultPool: PoolSchema.nullable(),
});
export type PoolRoutes = z.infer<typeof PoolRoutesSchema>;

/** Unset or empty POOL_ROUTES: every request goes to "default", as before pools were routed. */
export const UNROUTED: PoolRoutes = { routes: {}, defaultPool: "default" };

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** `{"model":"pool","*":"pool"}` or `model=pool,model=pool,*=pool` as model → pool entries, or why not. */
function entries(raw: string): Parsed<[string, string][]> {
  if (raw.startsWith("{")) {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return { ok: false, message: "starts with { but is not valid JSON" };
    }
    const r = z.record(z.string(), z.string()).safeParse(json);
    return r.success ? { ok: true, value: Object.entries(r.data) } : { ok: false, message: "the JSON form must be an object of model → pool strings" };
  }
  const out: [string, string][] = [];
  for (const part of raw.split(",")) {
    const m = /^([^=]*)=([^=]*)$/.exec(part.trim());
    if (m?.[1] === undefined || m[2] === undefined) return { ok: false, message: `"${part.trim()}" is not model=pool` };
    const model = m[1].trim();
    if (out.some(([k]) => k === model)) return { ok: false, message: `"${model}" is listed twice` };
    out.push([model, m[2].trim()]);
  }
  return { ok: true, value: out };
}

/** Parses POOL_ROUTES; the message says what is wrong, for the error an operator sees on the first request. */
export function parsePoolRoutes(raw: string | undefined): Parsed<PoolRoutes> {
  const text = raw?.trim() ?? "";
  if (text === "") return { ok: true, value: UNROUTED };
  const e = entries(text);
  if (!e.ok) return { ok: false, message: `POOL_ROUTES: ${e.message}` };
  if (e.value.length === 0) return { ok: false, message: "POOL_ROUTES: names no route (leave it empty to send everything to the pool \"default\")" };
  // Entry by entry, so the message names the entry at fault.
  for (const [model, pool] of e.value) {
    const bad = (model === DEFAULT_ROUTE ? undefined : ModelSchema.safeParse(model).error) ?? PoolSchema.safeParse(pool).error;
    if (bad !== undefined) return { ok: false, message: `POOL_ROUTES: entry "${model}": ${bad.issues[0]?.message ?? "invalid"}` };
  }
  const routes = Object.fromEntries(e.value.filter(([k]) => k !== DEFAULT_ROUTE));
  const r = PoolRoutesSchema.safeParse({ routes, defaultPool: e.value.find(([k]) => k === DEFAULT_ROUTE)?.[1] ?? null });
  if (!r.success) return { ok: false, message: `POOL_ROUTES: ${r.error.issues[0]?.message ?? "invalid"}` };
  return { ok: true, value: r.data };
}

/** What routing looks at: the pool the client named (field or header) and the model it asked for, if any. */
export interface RouteAsk {
  pool?: string | undefined;
  model?: string | undefined;
}

export type RouteDecision =
  | { ok: true; pool: string; by: "explicit" | "model" | "default" }
  | { ok: false; error: { code: "unknown_model"; message: string } };

/** The models the routes name, sorted: what `GET /v1/models` lists. */
export function routedModels(routes: PoolRoutes): string[] {
  return Object.keys(routes.routes).sort();
}

/**
 * An explicit pool wins (an operator's or client's deliberate choice, also the escape hatch for a model the
 * routes do not know yet); else the model's route; else the default pool. A request that names no model
 * asks for DEFAULT_MODEL, the model text2sql and replay workflows are written for.
 */
export function routePool(routes: PoolRoutes, ask: RouteAsk): RouteDecision {
  if (ask.pool !== undefined) return { ok: true, pool: ask.pool, by: "explicit" };
  const model = ask.model ?? DEFAULT_MODEL;
  const routed = Object.hasOwn(routes.routes, model) ? routes.routes[model] : undefined;
  if (routed !== undefined) return { ok: true, pool: routed, by: "model" };
  if (routes.defaultPool !== null) return { ok: true, pool: routes.defaultPool, by: "default" };
  const known = routedModels(routes);
  const asked = ask.model === undefined ? `the request names no model, and the default model "${model}"` : `the model "${model}"`;
  return { ok: false, error: { code: "unknown_model", message: `${asked} is not served here; known models: ${known.join(", ")}` } };
}
