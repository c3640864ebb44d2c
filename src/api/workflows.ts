import { Hono, type Context } from "hono";
import { errorBody } from "./errors";
import type { TenantEnv } from "./auth";
import { failure } from "./results";
import { WorkflowIdSchema } from "./schemas";
import type { StartInput } from "../objects/workflow";
import { startForTenant } from "./start-workflow";
import { parseWorkflowRequest, text2sqlStart } from "./workflow-request";
import { newWorkflowId } from "./workflow-ids";
import { workflowView } from "./workflow-view";

/** `Prefer: wait=N` (RFC 7240): hold the answer up to N seconds (at most MAX_WAIT_S) for the workflow to end. */
const MAX_WAIT_S = 60;
const WAIT_POLL_MS = 100;

function preferredWaitS(header: string | undefined): number {
  const m = /(?:^|[,;\s])wait\s*=\s*(\d+)/i.exec(header ?? "");
  return m?.[1] === undefined ? 0 : Math.min(Number(m[1]), MAX_WAIT_S);
}

const ENDED = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Whether the id is one of the caller's workflows, from its tenant's index: a made-up id or another tenant's
 * answers exactly as a missing one, and never touches (so never creates) a WorkflowObject.
 */
async function owned(c: Context<TenantEnv>, id: string): Promise<boolean> {
  return WorkflowIdSchema.safeParse(id).success && (await c.env.TENANT.getByName(c.get("tenant").id).owns(id));
}

export const workflows = new Hono<TenantEnv>()
  .post("/", async (c) => {
    const tenant = c.get("tenant");
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json(errorBody("invalid_request", "the body is not valid JSON"), 400);
    }
    const parsed = parseWorkflowRequest(raw);
    if (!parsed.ok) return c.json(errorBody("invalid_request", parsed.message), 400);
    const body = parsed.value;
    let what: Pick<StartInput, "spec" | "dag" | "text2sql">;
    if (body.kind === "text2sql") {
      const db = await c.env.CATALOG.getByName(tenant.id).get(body.request.database);
      if (!db.ok) return c.json(errorBody("not_found", `no database named "${body.request.database}"`), 404);
      what = text2sqlStart(body.request, db.value.schema, tenant.id);
    } else {
      what = { spec: body.spec, ...(body.dag === undefined ? {} : { dag: body.dag }) };
    }
    const clock = await c.env.COORDINATOR.getByName(body.pool).clock();
    if (clock.baseSloS === null) return c.json(errorBody("no_instance", `pool "${body.pool}" has no active instance`), 503);
    const id = newWorkflowId();
    const ask = { sloS: body.sloMs === undefined ? undefined : body.sloMs / 1000, scale: body.sloScale };
    const r = await startForTenant(c, { id, pool: body.pool, nowS: clock.nowS, baseS: clock.baseSloS, ask, what }, (status, code, message) => c.json(errorBody(code, message), status));
    if (!r.ok) return r.response;
    const waitS = preferredWaitS(c.req.header("prefer"));
    // The workflow runs whether or not anyone waits; waiting only decides which answer this request gets.
    for (const end = Date.now() + waitS * 1000; Date.now() < end; ) {
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      const v = await c.env.WORKFLOW.getByName(id).view(tenant.id);
      if (v.ok && ENDED.has(v.value.meta.status)) {
        c.header("preference-applied", `wait=${waitS}`);
        return c.json(workflowView(v.value.meta, v.value.calls), 200);
      }
    }
    return c.json({ id, status: r.status, sloMs: Math.round(r.sloS * 1000), bestEffort: r.bestEffort, links: { self: `/v1/workflows/${id}` } }, 202);
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await owned(c, id))) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).view(c.get("tenant").id);
    if (!r.ok) return failure(c, r.error);
    return c.json(workflowView(r.value.meta, r.value.calls));
  })
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await owned(c, id))) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).cancel(c.get("tenant").id);
    if (!r.ok) return failure(c, r.error);
    return c.json({ id, status: r.value.status });
  });
