/**
 * α tuning under the admin routes (so the admin credential guards them): the decision history with its
 * simulated curves, and a tuning now, run by the tuner Worker (workers/tuner) through the TUNER service
 * binding. Pinning α is `PUT /admin/pools/:pool/policy` with `pinned`.
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { listDecisions } from "../db/tuning-decisions";
import { errorBody } from "./errors";
import { PoolNameSchema } from "./schemas";

/** TUNER is absent where the tuner is not deployed next to the gateway (e.g. a bare local dev). */
type TuningEnv = { Bindings: Env & { TUNER?: Fetcher } };

export const HistoryQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });
const TunerErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

const UNREACHABLE = "the tuner Worker (hexflow-tuner) is not reachable: deploy it, or run it beside the gateway locally";

export const adminTuning = new Hono<TuningEnv>()
  .get("/pools/:pool/tuning", async (c) => {
    const pool = PoolNameSchema.safeParse(c.req.param("pool"));
    if (!pool.success) return c.json(errorBody("invalid_request", "not a valid pool name"), 400);
    const q = HistoryQuerySchema.safeParse(c.req.query());
    if (!q.success) return c.json(errorBody("invalid_request", z.prettifyError(q.error)), 400);
    return c.json({ pool: pool.data, decisions: await listDecisions(c.env.TRACES, pool.data, q.data.limit) });
  })
  .post("/pools/:pool/tune", async (c) => {
    const pool = PoolNameSchema.safeParse(c.req.param("pool"));
    if (!pool.success) return c.json(errorBody("invalid_request", "not a valid pool name"), 400);
    const tuner = c.env.TUNER;
    const token = c.env.ADMIN_TOKEN;
    if (tuner === undefined || token === undefined) return c.json(errorBody("unavailable", UNREACHABLE), 503);
    let res: Response;
    try {
      res = await tuner.fetch(`https://hexflow-tuner/tune?pool=${encodeURIComponent(pool.data)}&reason=manual`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    } catch (e) {
      return c.json(errorBody("unavailable", `${UNREACHABLE} (${e instanceof Error ? e.message : String(e)})`), 503);
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (res.ok && body !== undefined) return c.json(body);
    // A tuner error is passed on as it is; anything else (a dev proxy's page) means no tuner answered.
    const tunerError = TunerErrorSchema.safeParse(body);
    if (tunerError.success && res.status >= 400) return c.json(tunerError.data, res.status as ContentfulStatusCode);
    return c.json(errorBody("unavailable", `${UNREACHABLE} (HTTP ${res.status})`), 503);
  });
