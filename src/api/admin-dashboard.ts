/**
 * The operator dashboard's one data route (`GET /admin/pools/:pool/dashboard`, admin credential): the pool's
 * instances as they stand, P95 latency / SLO attainment / throughput over time, α and its tuning decisions,
 * and the call timelines of the most recent workflows. The page (public/dashboard.html) is a static shell
 * that polls this route; it holds no data of its own, so it can be served without a credential.
 */
import { Hono } from "hono";
import { z } from "zod";
import { latencySeries, SeriesOptionsSchema, timelines } from "../core/dashboard";
import { endedSince, recentWorkflows } from "../db/dashboard";
import { listDecisions } from "../db/tuning-decisions";
import { errorBody } from "./errors";
import { PoolNameSchema } from "./schemas";

export const DashboardQuerySchema = SeriesOptionsSchema.extend({
  /** Recent workflows drawn as timelines. */
  recent: z.coerce.number().int().min(0).max(50).default(6),
  /** Tuning decisions (newest first) for the α chart. */
  decisions: z.coerce.number().int().min(0).max(500).default(100),
}).strict();

export const adminDashboard = new Hono<{ Bindings: Env }>().get("/pools/:pool/dashboard", async (c) => {
  const pool = PoolNameSchema.safeParse(c.req.param("pool"));
  if (!pool.success) return c.json(errorBody("invalid_request", "not a valid pool name"), 400);
  const q = DashboardQuerySchema.safeParse(c.req.query());
  if (!q.success) return c.json(errorBody("invalid_request", z.prettifyError(q.error)), 400);
  const o = q.data;
  const nowMs = Date.now();
  const [view, ended, recent, decisions] = await Promise.all([
    c.env.COORDINATOR.getByName(pool.data).pool(),
    endedSince(c.env.TRACES, pool.data, nowMs - (o.windowS + o.spanS) * 1000),
    recentWorkflows(c.env.TRACES, pool.data, o.recent),
    listDecisions(c.env.TRACES, pool.data, o.decisions),
  ]);
  return c.json({
    pool: pool.data,
    nowMs,
    view,
    series: { ...o, truncated: ended.truncated, points: latencySeries(ended.rows, nowMs, o) },
    // Oldest first, without the simulated curves: the chart needs the steps, not the sweeps.
    tuning: decisions.reverse().map(({ curve: _curve, ...d }) => d),
    recent: timelines(recent.workflows, recent.calls),
  });
});
