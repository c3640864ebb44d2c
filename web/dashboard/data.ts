/**
 * The dashboard's view of `GET /admin/pools/:pool/dashboard`, checked on arrival: the page is a client of
 * the API like any other, so a changed response shows as one clear error instead of a broken chart.
 * zod/mini keeps the checker small in the bundle.
 */
import * as z from "zod/mini";

const num = z.number();
const maybe = z.nullable(z.number());

export const InstanceSchema = z.object({
  id: z.string(),
  gpu: z.string(),
  state: z.string(),
  loadS: num,
  queued: num,
  running: num,
  health: z.object({ status: z.string(), lastError: z.nullable(z.string()) }),
});
export type Instance = z.infer<typeof InstanceSchema>;

const PointSchema = z.object({ atMs: num, ended: num, p95S: maybe, attainment: maybe, throughputPerS: num, sloP50S: maybe });

const DecisionSchema = z.object({
  atMs: num,
  reason: z.string(),
  currentAlpha: num,
  bestAlpha: maybe,
  gain: maybe,
  installed: z.boolean(),
  alphaVersion: maybe,
  skipped: z.nullable(z.string()),
  workflows: num,
});
export type Decision = z.infer<typeof DecisionSchema>;

const CallSchema = z.object({
  id: z.string(),
  step: z.string(),
  instance: z.string(),
  gpu: z.nullable(z.string()),
  releasedS: num,
  enqueuedS: maybe,
  startedS: maybe,
  finishedS: maybe,
  met: z.nullable(z.boolean()),
  error: z.nullable(z.string()),
});

const TimelineSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  kind: z.string(),
  status: z.string(),
  latencyS: maybe,
  sloS: num,
  sloMet: z.nullable(z.boolean()),
  endedAtMs: num,
  calls: z.array(CallSchema),
});
export type Timeline = z.infer<typeof TimelineSchema>;

export const DashboardSchema = z.object({
  pool: z.string(),
  nowMs: num,
  view: z.object({
    policy: z.string(),
    alpha: num,
    alphaVersion: num,
    pinned: z.boolean(),
    baseSloS: maybe,
    instances: z.array(InstanceSchema),
  }),
  series: z.object({ windowS: num, stepS: num, spanS: num, truncated: z.boolean(), points: z.array(PointSchema) }),
  tuning: z.array(DecisionSchema),
  recent: z.array(TimelineSchema),
});
export type Dashboard = z.infer<typeof DashboardSchema>;

export type Fetched = { ok: true; data: Dashboard } | { ok: false; status: number; message: string };

/** One poll. Never throws: a network error or a bad answer is a value the page shows. */
export async function fetchDashboard(pool: string, token: string, query: URLSearchParams): Promise<Fetched> {
  let res: Response;
  try {
    res = await fetch(`/admin/pools/${encodeURIComponent(pool)}/dashboard?${query.toString()}`, { headers: { authorization: `Bearer ${token}` } });
  } catch (e) {
    return { ok: false, status: 0, message: `the gateway is not reachable (${e instanceof Error ? e.message : String(e)})` };
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const err = z.object({ error: z.object({ message: z.string() }) }).safeParse(body);
    return { ok: false, status: res.status, message: err.success ? err.data.error.message : `HTTP ${res.status}` };
  }
  const parsed = DashboardSchema.safeParse(body);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, status: res.status, message: `unexpected answer: ${parsed.error.message.slice(0, 200)}` };
}
