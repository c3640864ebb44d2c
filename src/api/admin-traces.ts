/**
 * The traces of a pool over a wall-clock window, as the reference trace format (replayable by the
 * simulator, with the arrival process beside it) or as the raw D1 rows: every tenant's under the admin
 * routes (`GET /admin/traces`), the caller's own under the tenant routes (`GET /v1/traces`).
 */
import { Hono, type Context } from "hono";
import type { TenantEnv } from "./auth";
import { z } from "zod";
import { referenceExport } from "../core/trace-rows";
import { readTraceWindow } from "../db/traces";
import { errorBody } from "./errors";

/** Enough for hours of traffic at a few workflows per second, small enough for one response. */
export const MAX_EXPORT_WORKFLOWS = 50_000;

/** Epoch milliseconds, or an ISO 8601 date. */
const instant = z.string().transform((raw, ctx) => {
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: "custom", message: `not epoch milliseconds or an ISO date: "${raw}"` });
    return z.NEVER;
  }
  return ms;
});

export const TraceQuerySchema = z
  .object({
    pool: z.string().min(1).max(200).default("default"),
    from: instant,
    to: instant,
    format: z.enum(["reference", "rows"]).default("reference"),
    limit: z.coerce.number().int().positive().max(MAX_EXPORT_WORKFLOWS).default(10_000),
  })
  .refine((q) => q.from < q.to, { message: "from must be before to" });

async function exportTraces<E extends { Bindings: Env }>(c: Context<E>, tenant: string | undefined): Promise<Response> {
  const parsed = TraceQuerySchema.safeParse(c.req.query());
  if (!parsed.success) return c.json(errorBody("invalid_request", z.prettifyError(parsed.error)), 400);
  const q = parsed.data;
  const rows = await readTraceWindow(c.env.TRACES, { pool: q.pool, fromMs: q.from, toMs: q.to, limit: q.limit, ...(tenant === undefined ? {} : { tenant }) });
  const head = { pool: q.pool, fromMs: q.from, toMs: q.to, workflows: rows.workflows.length, truncated: rows.workflows.length === q.limit };
  if (q.format === "rows") return c.json({ ...head, ...rows });
  return c.json({ ...head, ...referenceExport(rows.workflows, rows.calls) });
}

export const adminTraces = new Hono<{ Bindings: Env }>().get("/", (c) => exportTraces(c, undefined));

export const tenantTraces = new Hono<TenantEnv>().get("/", (c) => exportTraces(c, c.get("tenant").id));
