/**
 * GET /metrics: Prometheus text format, admin credential. Counters come from D1 (metric_counters, one
 * read of a table sized by label cardinality, never the traces); live gauges from each pool's coordinator.
 * A pool whose coordinator does not answer in time costs its live gauges only: hexflow_pool_up is 0.
 */
import { Hono } from "hono";
import { z } from "zod";
import { metricFamilies, type PoolSnapshot } from "../core/metrics-catalog";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../core/prometheus-text";
import { withTimeout } from "../db/with-timeout";
import { listPools, readCounters } from "../db/metric-counters";
import { requireAdmin } from "./admin-auth";
import { errorBody } from "./errors";
import { PoolNameSchema } from "./schemas";

/** Real milliseconds a scrape waits for one coordinator; Prometheus' own scrape timeout defaults to 10 s. */
const POOL_TIMEOUT_MS = 3000;

export const MetricsQuerySchema = z.object({ pool: z.array(PoolNameSchema.unwrap()).optional().meta({ description: "Only these pools (repeat the parameter); default: every known pool" }) });

async function snapshot(env: Env, pool: string): Promise<PoolSnapshot> {
  try {
    const view = await withTimeout(env.COORDINATOR.getByName(pool).pool(), POOL_TIMEOUT_MS);
    return {
      pool,
      up: true,
      alpha: view.alpha,
      alphaVersion: view.alphaVersion,
      instances: view.instances.map((i) => ({ id: i.id, gpu: i.gpu, queued: i.queued, running: i.running, loadS: i.loadS, health: i.health.status })),
    };
  } catch (e) {
    console.error(`metrics: pool ${pool} did not answer`, e);
    return { pool, up: false };
  }
}

export const metrics = new Hono<{ Bindings: Env }>().use("*", requireAdmin).get("/", async (c) => {
  const query = MetricsQuerySchema.safeParse({ pool: c.req.queries("pool") });
  if (!query.success) return c.json(errorBody("invalid_request", z.prettifyError(query.error)), 400);
  const only = query.data.pool === undefined ? undefined : new Set(query.data.pool);
  const [counters, known] = await Promise.all([readCounters(c.env.TRACES), listPools(c.env.TRACES)]);
  const pools = only === undefined ? known : known.filter((p) => only.has(p));
  const snapshots = await Promise.all(pools.map((p) => snapshot(c.env, p)));
  const kept = only === undefined ? counters : counters.filter((s) => s.labels.pool !== undefined && only.has(s.labels.pool));
  return c.body(renderPrometheus(metricFamilies(kept, snapshots)), 200, { "content-type": PROMETHEUS_CONTENT_TYPE });
});
