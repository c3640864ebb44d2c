import { Hono, type Context } from "hono";
import { IdempotencyKeySchema } from "../core/idempotency";
import { lastEventId } from "../core/workflow-events";
import { ownSloS } from "../objects/workflow-store";
import { errorBody } from "./errors";
import type { TenantEnv } from "./auth";
import { issueMessage } from "./json-body";
import { failure } from "./results";
import { WorkflowIdSchema } from "./schemas";
import type { StartInput } from "../objects/workflow";
import { startForTenant } from "./start-workflow";
import { routedStatus, routeRequest } from "./pool-routes";
import { parseWorkflowRequest, text2sqlStart, type UnroutedRequest, type WorkflowRequest } from "./workflow-request";
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

/** Part of what an Idempotency-Key's fingerprint covers, so a key reused on another route would not match. */
const ROUTE = "POST /v1/workflows";

/** SHA-256 of the route and the raw body bytes: a replay must be byte-for-byte the same request. */
export async function requestFingerprint(body: ArrayBuffer): Promise<string> {
  const route = new TextEncoder().encode(`${ROUTE}\n`);
  const bytes = new Uint8Array(route.byteLength + body.byteLength);
  bytes.set(route);
  bytes.set(new Uint8Array(body), route.byteLength);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Whether the id is one of the caller's workflows, from its tenant's index: a made-up id or another tenant's
 * answers exactly as a missing one, and never touches (so never creates) a WorkflowObject.
 */
async function owned(c: Context<TenantEnv>, id: string): Promise<boolean> {
  return WorkflowIdSchema.safeParse(id).success && (await c.env.TENANT.getByName(c.get("tenant").id).owns(id));
}

type Accepted = { status: string; sloS: number; bestEffort: boolean };

/** Starts the request as workflow `id`, or says why not (the refusal has undone what it took). */
async function start(c: Context<TenantEnv>, body: WorkflowRequest, id: string): Promise<({ ok: true } & Accepted) | { ok: false; response: Response }> {
  const tenant = c.get("tenant");
  let what: Pick<StartInput, "spec" | "dag" | "text2sql">;
  if (body.kind === "text2sql") {
    const db = await c.env.CATALOG.getByName(tenant.id).get(body.request.database);
    if (!db.ok) return { ok: false, response: c.json(errorBody("not_found", `no database named "${body.request.database}"`), 404) };
    what = text2sqlStart(body.request, db.value.schema, tenant.id);
  } else {
    what = { spec: body.spec, ...(body.dag === undefined ? {} : { dag: body.dag }) };
  }
  const clock = await c.env.COORDINATOR.getByName(body.pool).clock();
  if (clock.baseSloS === null) return { ok: false, response: c.json(errorBody("no_instance", `pool "${body.pool}" has no active instance`), 503) };
  const ask = { sloS: body.sloMs === undefined ? undefined : body.sloMs / 1000, scale: body.sloScale };
  return startForTenant(c, { id, pool: body.pool, nowS: clock.nowS, baseS: clock.baseSloS, ask, what }, (status, code, message) => c.json(errorBody(code, message), status));
}

/** The answer to a started workflow: 202, or its view if it ends within `Prefer: wait=N`. */
async function accepted(c: Context<TenantEnv>, id: string, r: Accepted): Promise<Response> {
  const waitS = preferredWaitS(c.req.header("prefer"));
  // The workflow runs whether or not anyone waits; waiting only decides which answer this request gets.
  for (const end = Date.now() + waitS * 1000; Date.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    const v = await c.env.WORKFLOW.getByName(id).view(c.get("tenant").id);
    if (v.ok && ENDED.has(v.value.meta.status)) {
      c.header("preference-applied", `wait=${waitS}`);
      return c.json(workflowView(v.value.meta, v.value.calls), 200);
    }
  }
  return c.json({ id, status: r.status, sloMs: Math.round(r.sloS * 1000), bestEffort: r.bestEffort, links: { self: `/v1/workflows/${id}` } }, 202);
}

/** What the key's first request answered, with the workflow's status now; nothing is started or counted again. */
async function replayed(c: Context<TenantEnv>, id: string): Promise<Response> {
  const v = await c.env.WORKFLOW.getByName(id).view(c.get("tenant").id);
  if (!v.ok) return failure(c, v.error);
  c.header("idempotent-replayed", "true");
  const { meta } = v.value;
  return accepted(c, id, { status: meta.status, sloS: ownSloS(meta), bestEffort: meta.bestEffort });
}

/**
 * A start under an Idempotency-Key (src/core/idempotency.ts): the key is claimed in the tenant's object before
 * anything is taken. A refusal frees it; an exception leaves it pending, since the start may have got through,
 * and a retry takes it over once it is stale.
 */
async function startOnce(c: Context<TenantEnv>, body: WorkflowRequest, key: string, bytes: ArrayBuffer): Promise<Response> {
  const tenant = c.get("tenant");
  const keys = c.env.TENANT.getByName(tenant.id);
  const claim = await keys.claimIdempotency(key, await requestFingerprint(bytes), newWorkflowId());
  switch (claim.kind) {
    case "mismatch":
      return c.json(errorBody("idempotency_key_reused", "this Idempotency-Key was used with a different request body"), 422);
    case "in_progress":
      c.header("retry-after", String(claim.retryAfterS));
      return c.json(errorBody("idempotency_in_progress", "a request with this Idempotency-Key is still starting its workflow; retry after Retry-After seconds"), 409);
    case "replay":
      return replayed(c, claim.workflowId);
    case "takeover": {
      // The stalled request may have got as far as starting the workflow: then it only missed saying so.
      const existing = await c.env.WORKFLOW.getByName(claim.workflowId).view(tenant.id);
      if (existing.ok) {
        await keys.idempotencyStarted(key, claim.workflowId);
        return replayed(c, claim.workflowId);
      }
      // Or as far as the pool's admission, whose reservation (kept by id) would count this workflow twice in
      // the decision below. The quota slot needs nothing: acquire is idempotent per workflow id.
      await c.env.COORDINATOR.getByName(body.pool).workflowEnded(claim.workflowId, null);
      break;
    }
    case "fresh":
      break;
  }
  const id = claim.workflowId;
  const r = await start(c, body, id);
  if (!r.ok) {
    await keys.releaseIdempotency(key, id);
    return r.response;
  }
  await keys.idempotencyStarted(key, id);
  return accepted(c, id, r);
}

/** The request on its pool; refused before anything (an idempotency key, a quota slot) is taken. */
function routed(c: Context<TenantEnv>, body: UnroutedRequest): { ok: true; value: WorkflowRequest } | { ok: false; response: Response } {
  const r = routeRequest(c.env, { pool: body.pool, model: body.kind === "spec" ? body.model : undefined });
  if (!r.ok) return { ok: false, response: c.json(errorBody(r.error.code, r.error.message), routedStatus(r.error)) };
  return { ok: true, value: { ...body, pool: r.pool } };
}

export const workflows = new Hono<TenantEnv>()
  .post("/", async (c) => {
    const keyHeader = c.req.header("idempotency-key");
    const key = keyHeader === undefined ? undefined : IdempotencyKeySchema.safeParse(keyHeader);
    if (key?.success === false) return c.json(errorBody("invalid_request", issueMessage(key.error)), 400);
    const bytes = await c.req.arrayBuffer();
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return c.json(errorBody("invalid_request", "the body is not valid JSON"), 400);
    }
    const parsed = parseWorkflowRequest(raw);
    if (!parsed.ok) return c.json(errorBody("invalid_request", parsed.message), 400);
    const body = routed(c, parsed.value);
    if (!body.ok) return body.response;
    if (key !== undefined) return startOnce(c, body.value, key.data, bytes);
    const id = newWorkflowId();
    const r = await start(c, body.value, id);
    return r.ok ? accepted(c, id, r) : r.response;
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await owned(c, id))) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).view(c.get("tenant").id);
    if (!r.ok) return failure(c, r.error);
    return c.json(workflowView(r.value.meta, r.value.calls));
  })
  .get("/:id/events", async (c) => {
    const id = c.req.param("id");
    const cursor = lastEventId(c.req.header("last-event-id"), c.req.query("lastEventId"));
    if (!cursor.ok) return c.json(errorBody("invalid_request", cursor.message), 400);
    if (!(await owned(c, id))) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).events(c.get("tenant").id, cursor.value);
    if (!r.ok) return failure(c, r.error);
    // 204 tells an EventSource the stream is over for good: it stops reconnecting.
    if (r.value.stream === null) return c.body(null, 204);
    return c.body(r.value.stream, 200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" });
  })
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await owned(c, id))) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).cancel(c.get("tenant").id);
    if (!r.ok) return failure(c, r.error);
    return c.json({ id, status: r.value.status });
  });
