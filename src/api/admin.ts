import { Hono } from "hono";
import { addPool } from "../db/metric-counters";
import { requireAdmin } from "./admin-auth";
import { errorBody } from "./errors";
import { jsonBody } from "./json-body";
import { LIMITS } from "../core/limits";
import { instanceObjectName } from "../objects/names";
import { failure } from "./results";
import { adminTraces } from "./admin-traces";
import { adminTuning } from "./admin-tuning";
import { adminTenants } from "./admin-tenants";
import { adminDashboard } from "./admin-dashboard";
import { adminRegistration } from "./admin-registration";

type AdminEnv = { Bindings: Env };


const MALFORMED = errorBody("invalid_request", `the body is not valid JSON, or nests deeper than ${LIMITS.http.maxJsonDepth} levels`);

/**
 * Pool administration, guarded by ADMIN_TOKEN from the Worker's environment (never a tenant key).
 * Bodies are validated by the coordinator against the pool schemas, so the rules live in one place.
 */
export const admin = new Hono<AdminEnv>()
  .use("*", requireAdmin)
  .route("/traces", adminTraces)
  .route("/tenants", adminTenants)
  .route("/", adminTuning)
  .route("/", adminDashboard)
  .route("/", adminRegistration)
  .get("/pools/:pool", async (c) => c.json(await c.env.COORDINATOR.getByName(c.req.param("pool")).pool()))
  .post("/pools/:pool/instances", async (c) => {
    const body = await jsonBody(c.req.raw);
    if (!body.ok) return c.json(MALFORMED, 400);
    const pool = c.req.param("pool");
    const r = await c.env.COORDINATOR.getByName(pool).register(pool, body.value);
    // /metrics scrapes the pools listed in D1; a failed listing leaves only this pool's live gauges out until its first trace.
    if (r.ok) await addPool(c.env.TRACES, pool).run().catch((e: unknown) => console.error(`pool ${pool}: not listed for /metrics`, e));
    return r.ok ? c.json(r.value, 201) : failure(c, r.error);
  })
  .patch("/pools/:pool/instances/:id", async (c) => {
    const body = await jsonBody(c.req.raw);
    if (!body.ok) return c.json(MALFORMED, 400);
    const r = await c.env.COORDINATOR.getByName(c.req.param("pool")).update(c.req.param("id"), body.value);
    return r.ok ? c.json(r.value) : failure(c, r.error);
  })
  .post("/pools/:pool/instances/:id/drain", async (c) => {
    const r = await c.env.COORDINATOR.getByName(c.req.param("pool")).setState(c.req.param("id"), "draining");
    return r.ok ? c.json(r.value) : failure(c, r.error);
  })
  .post("/pools/:pool/instances/:id/activate", async (c) => {
    const r = await c.env.COORDINATOR.getByName(c.req.param("pool")).setState(c.req.param("id"), "active");
    return r.ok ? c.json(r.value) : failure(c, r.error);
  })
  .delete("/pools/:pool/instances/:id", async (c) => {
    const r = await c.env.COORDINATOR.getByName(c.req.param("pool")).remove(c.req.param("id"));
    return r.ok ? c.json(r.value) : failure(c, r.error);
  })
  .get("/pools/:pool/instances/:id/queue", async (c) => {
    const pool = c.req.param("pool");
    const id = c.req.param("id");
    const view = await c.env.COORDINATOR.getByName(pool).pool();
    if (!view.instances.some((i) => i.id === id)) return c.json(errorBody("not_found", `no instance ${id}`), 404);
    return c.json(await c.env.GPU_INSTANCE.getByName(instanceObjectName(pool, id)).stats());
  })
  .put("/pools/:pool/policy", async (c) => {
    const body = await jsonBody(c.req.raw);
    if (!body.ok) return c.json(MALFORMED, 400);
    const r = await c.env.COORDINATOR.getByName(c.req.param("pool")).setPolicy(body.value);
    return r.ok ? c.json(r.value) : failure(c, r.error);
  });
