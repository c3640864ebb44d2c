/**
 * The one route a GPU host's registration token opens: `PUT /register/pools/:pool/instances/:id`, the host
 * registering its own vLLM server in the token's pool, again after every reboot (the same id updates the
 * record, keeping its state: an instance the operator drained stays drained). The token reaches nothing else:
 * /admin checks ADMIN_TOKEN, /v1 tenant keys, and neither knows `hfr_` tokens. Every refusal, whatever its
 * reason (no token, malformed, unknown, expired, revoked, another pool's), is the same 401, and the token is
 * never logged or echoed.
 */
import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import { LIMITS } from "../core/limits";
import { InstanceRegistrationSchema } from "../core/pool";
import { bearer } from "../db/api-keys";
import { addPool } from "../db/metric-counters";
import { authenticateRegistration, recordRegistration } from "../db/registration-tokens";
import { PoolParamSchema } from "./admin-registration";
import { errorBody } from "./errors";
import { issueMessage, jsonBody } from "./json-body";
import { failure } from "./results";

type RegisterEnv = { Bindings: Env; Variables: { registrationTokenId: string } };
type Ctx = Context<RegisterEnv>;

export const REGISTRATION_UNAUTHORIZED = errorBody("unauthorized", "a valid registration token for this pool is required: Authorization: Bearer <token>");

function refuse(c: Ctx): Response {
  c.header("www-authenticate", 'Bearer realm="hexflow-registration"');
  return c.json(REGISTRATION_UNAUTHORIZED, 401);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The pool segment of the raw path, as the middleware sees it before any route has matched. */
const rawPathPool = (c: Ctx): string | undefined => /^\/register\/pools\/([^/]+)\//.exec(c.req.path)?.[1];

async function authorize(c: Ctx, pool: string | undefined): Promise<string | undefined | "unavailable"> {
  const token = bearer(c.req.header("authorization"));
  if (token === undefined || pool === undefined || !PoolParamSchema.safeParse(pool).success) return undefined;
  const nowMs = Date.now();
  try {
    return await authenticateRegistration(c.env.TRACES, token, pool, nowMs).catch(() => authenticateRegistration(c.env.TRACES, token, pool, nowMs));
  } catch {
    console.error("registration: the tokens database did not answer");
    return "unavailable";
  }
}

/**
 * Every path under /register, routed or not, answers 401 without a live token of the pool it names, so an
 * unknown path tells a stranger nothing more than a known one.
 */
const requireRegistrationToken = createMiddleware<RegisterEnv>(async (c, next) => {
  const pool = rawPathPool(c);
  const tokenId = await authorize(c, pool);
  if (tokenId === "unavailable") {
    c.header("retry-after", "1");
    return c.json(errorBody("unavailable", "registration is unavailable for a moment; retry"), 503);
  }
  if (tokenId === undefined) return refuse(c);
  c.set("registrationTokenId", tokenId);
  await next();
  return undefined;
});

export const register = new Hono<RegisterEnv>().use("*", requireRegistrationToken).put("/pools/:pool/instances/:id", async (c) => {
  const pool = c.req.param("pool");
  const id = c.req.param("id");
  const tokenId = c.get("registrationTokenId");
  // The middleware read the pool from the raw path; the route's decoded one must be the same pool.
  if (pool !== rawPathPool(c)) return refuse(c);

  const read = await jsonBody(c.req.raw);
  const raw = read.ok ? read.value : undefined;
  if (!isObject(raw)) return c.json(errorBody("invalid_request", `the body must be a JSON object no deeper than ${LIMITS.http.maxJsonDepth} levels`), 400);
  if (raw["id"] !== undefined && raw["id"] !== id) return c.json(errorBody("invalid_request", "id: must be the instance id of the path"), 400);
  const body = { ...raw, id };
  // Checked here as well as in the coordinator, so a bad body never wakes the pool's object.
  const parsed = InstanceRegistrationSchema.safeParse(body);
  if (!parsed.success) return c.json(errorBody("invalid_request", issueMessage(parsed.error)), 400);

  const coordinator = c.env.COORDINATOR.getByName(pool);
  let created = true;
  let r = await coordinator.register(pool, body);
  if (!r.ok && r.error.code === "conflict") {
    const existing = (await coordinator.pool()).instances.find((i) => i.id === id);
    if (existing !== undefined) {
      if (existing.timeScale !== parsed.data.timeScale) return c.json(errorBody("conflict", `instance ${id} runs at time scale ${existing.timeScale}`), 409);
      // The update takes the registration's fields but for the id (the path's) and the time scale (fixed per pool).
      const update = Object.fromEntries(Object.entries(body).filter(([k]) => k !== "id" && k !== "timeScale"));
      created = false;
      r = await coordinator.update(id, update);
    }
  }
  if (!r.ok) return failure(c, r.error);
  await Promise.all([
    // /metrics scrapes the pools listed in D1 (as POST /admin/pools/:pool/instances does).
    addPool(c.env.TRACES, pool).run().catch((e: unknown) => console.error(`pool ${pool}: not listed for /metrics`, e)),
    recordRegistration(c.env.TRACES, tokenId, id, Date.now()).catch(() => console.error(`registration token ${tokenId}: last use not recorded`)),
  ]);
  return c.json(r.value, created ? 201 : 200);
});
