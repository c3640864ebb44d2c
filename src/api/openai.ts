/**
 * OpenAI-compatible `POST /v1/chat/completions` and `POST /v1/completions`. Each request is a
 * one-call workflow, scheduled like any other (WorkflowObject → coordinator → instance queue), so
 * plain traffic competes for the same GPUs under the same policy. The answer streams from the
 * instance that runs the call (GpuInstanceObject.subscribe), to the client as OpenAI's SSE chunks
 * or collected into one body; a call that fails over to another instance before writing anything is
 * followed there (call-events.ts).
 *
 * `X-Hexflow-Pool` picks the pool; without it POOL_ROUTES picks it from `model` (src/core/pool-routing.ts),
 * and a model no route or default pool serves is a 400 `unknown_model`. `model` may be omitted; if given
 * it must be a model an active instance of the pool serves, otherwise 404 as OpenAI and vLLM answer.
 * `X-SLO-Ms` sets the deadline in pool-clock milliseconds. The workflow id comes back in
 * `X-Hexflow-Workflow-Id` and in the response id. `GET /v1/models` lists the routed models.
 */
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { toInstanceInfo } from "../core/pool";
import type { CallStreamEvent } from "../objects/call-streams";
import { instanceObjectName } from "../objects/names";
import { CallFollower } from "./call-events";
import { callFailure, openaiError, OpenAIShaper, sse, usage } from "./openai-format";
import type { TenantEnv } from "./auth";
import { startForTenant } from "./start-workflow";
import { callBaseSloSeconds, oneCallSpec, parseOpenAIRequest, parsePoolHeader, parseSloHeader, type Endpoint, type OpenAIRequest } from "./openai-schemas";
import { newWorkflowId } from "./workflow-ids";
import { configuredRoutes, routedStatus, routeRequest } from "./pool-routes";
import { routedModels } from "../core/pool-routing";

type Ctx = Context<TenantEnv>;

/**
 * How long a streamed request waits for the call's first event before sending headers: an early
 * failure (vLLM refusing the request) then gets its real status; a call still queued gets its
 * headers and the role chunk without waiting longer.
 */
const FIRST_EVENT_WAIT_MS = 2_000;
/**
 * While a streamed call waits (queued, or a long prefill), an SSE comment goes out this often: a
 * write is how the runtime notices a client that went away, which cancels the workflow.
 */
const KEEP_ALIVE_MS = 1_000;
const KEEP_ALIVE = new TextEncoder().encode(": keep-alive\n\n");

const sleep = (ms: number): Promise<undefined> => new Promise((r) => setTimeout(() => r(undefined), ms));

function fail(c: Ctx, status: ContentfulStatusCode, code: string, message: string, param: string | null = null): Response {
  return c.json(openaiError(status, code, message, param), status);
}

async function handle(c: Ctx, endpoint: Endpoint): Promise<Response> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return fail(c, 400, "invalid_request", "the body is not valid JSON");
  }
  const parsed = parseOpenAIRequest(endpoint, raw);
  if (!parsed.ok) return fail(c, 400, "invalid_request", parsed.message, parsed.param);
  const slo = parseSloHeader(c.req.header("x-slo-ms"));
  if (!slo.ok) return fail(c, 400, "invalid_request", slo.message, slo.param);
  const header = parsePoolHeader(c.req.header("x-hexflow-pool"));
  if (!header.ok) return fail(c, 400, "invalid_request", header.message, header.param);
  const req = parsed.value;
  const route = routeRequest(c.env, { pool: header.value, model: req.model });
  if (!route.ok) return fail(c, routedStatus(route.error), route.error.code, route.error.message, route.error.code === "unknown_model" ? "model" : null);
  const pool = route.pool;

  const coordinator = c.env.COORDINATOR.getByName(pool);
  const [clock, view] = await Promise.all([coordinator.clock(), coordinator.pool()]);
  const active = view.instances.filter((i) => i.state === "active");
  const served = active[0]?.model;
  if (served === undefined) return fail(c, 503, "no_instance", `pool "${pool}" has no active instance`);
  if (req.model !== undefined && !active.some((i) => i.model === req.model)) return fail(c, 404, "model_not_found", `The model \`${req.model}\` does not exist.`, "model");

  const id = newWorkflowId();
  const tenant = c.get("tenant");
  const baseS = callBaseSloSeconds(req, active.map(toInstanceInfo));
  const ask = { sloS: slo.value === undefined ? undefined : slo.value / 1000 };
  const started = await startForTenant(c, { id, pool, nowS: clock.nowS, baseS, ask, what: { spec: oneCallSpec(req) } }, (status, code, message) => fail(c, status, code, message));
  if (!started.ok) return started.response;
  const workflow = c.env.WORKFLOW.getByName(id);
  c.header("X-Hexflow-Workflow-Id", id);
  const wv = await workflow.view(tenant.id);
  if (!wv.ok) return fail(c, 500, "internal", "the workflow vanished after it started");
  const call = wv.value.calls[0];
  if (call === undefined) {
    const e = wv.value.meta.error;
    return fail(c, 503, e?.code ?? "unavailable", e?.message ?? "the call was not dispatched");
  }
  const subscribe = (instanceId: string, dispatch: number): Promise<ReadableStream<Uint8Array>> => c.env.GPU_INSTANCE.getByName(instanceObjectName(pool, instanceId)).subscribe(call.id, dispatch);
  const events = new CallFollower(await subscribe(call.instanceId, call.dispatch), call.dispatch, subscribe, () => workflow.callPlace(tenant.id, call.id));
  const shaper = new OpenAIShaper(endpoint, id, req.model ?? served);
  // The client going away cancels the workflow, so a call still queued leaves its instance.
  const cancel = (): void => c.executionCtx.waitUntil(workflow.cancel(tenant.id).then(() => undefined, () => undefined));
  return req.stream ? streamed(c, req, events, shaper, cancel) : collected(c, events, shaper, cancel);
}

async function collected(c: Ctx, events: CallFollower, shaper: OpenAIShaper, cancel: () => void): Promise<Response> {
  // Best effort: workerd signals a client disconnect on the request only where the runtime supports it. The
  // client may have gone while the workflow was starting: an abort before the listener is heard now.
  const gone = (): void => {
    events.cancel();
    cancel();
  };
  if (c.req.raw.signal.aborted) gone();
  else c.req.raw.signal.addEventListener("abort", gone, { once: true });
  let text = "";
  for (;;) {
    const e = await events.next();
    if ("delta" in e) text += e.delta;
    else if ("done" in e) return c.json(shaper.full(text, e.finishReason, usage(e.usage)));
    else {
      const f = callFailure(e.error);
      return fail(c, f.status, f.code, f.message);
    }
  }
}

async function streamed(c: Ctx, req: OpenAIRequest, events: CallFollower, shaper: OpenAIShaper, cancel: () => void): Promise<Response> {
  let pending: Promise<CallStreamEvent> | undefined = events.next();
  const first = await Promise.race([pending, sleep(FIRST_EVENT_WAIT_MS)]);
  if (first !== undefined && "error" in first) {
    const f = callFailure(first.error);
    return fail(c, f.status, f.code, f.message);
  }
  let opened = false;
  let finished = false;
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      if (!opened) {
        opened = true;
        const role = shaper.roleChunk();
        if (role !== undefined) return controller.enqueue(sse(role));
      }
      pending ??= events.next();
      const e = await Promise.race([pending, sleep(KEEP_ALIVE_MS)]);
      if (e === undefined) return controller.enqueue(KEEP_ALIVE);
      pending = undefined;
      if ("delta" in e) return controller.enqueue(sse(shaper.textChunk(e.delta)));
      finished = true;
      if ("done" in e) {
        controller.enqueue(sse(shaper.finishChunk(e.finishReason)));
        if (req.includeUsage) controller.enqueue(sse(shaper.usageChunk(usage(e.usage))));
        controller.enqueue(sse("[DONE]"));
      } else {
        // Headers are gone: the failure travels as an SSE error event (OpenAI clients raise it), without [DONE].
        const f = callFailure(e.error);
        controller.enqueue(sse(openaiError(f.status, f.code, f.message)));
      }
      controller.close();
      return undefined;
    },
    cancel: () => {
      events.cancel();
      if (!finished) cancel();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-hexflow-workflow-id": shaper.workflowId,
    },
  });
}

/** OpenAI's model list, of the models POOL_ROUTES routes (what a client may name without a pool header). */
function models(c: Ctx): Response {
  const routes = configuredRoutes(c.env);
  if (!routes.ok) return fail(c, 500, routes.error.code, routes.error.message);
  return c.json({ object: "list", data: routedModels(routes.value).map((id) => ({ id, object: "model", created: 0, owned_by: "hexflow" })) });
}

export const openai = new Hono<TenantEnv>()
  .get("/models", models)
  .post("/chat/completions", (c) => handle(c, "chat"))
  .post("/completions", (c) => handle(c, "completion"));
