/**
 * The OpenAPI 3.1 document of the gateway, generated from the zod schemas the routes validate with
 * (@asteasolutions/zod-to-openapi), so a limit or a field changed in a schema changes the document too.
 * Every route of src/api/app.ts is registered here; test/workers/openapi.test.ts fails on one that is not.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { DagRequestSchema } from "../core/dag";
import { DatabaseNameSchema } from "../core/database";
import { IDEMPOTENCY_RETENTION_MS, IdempotencyKeySchema } from "../core/idempotency";
import { LIMITS } from "../core/limits";
import { WorkflowEventDataSchema } from "../core/workflow-events";
import { InstanceRecordSchema, InstanceRegistrationSchema, InstanceUpdateSchema } from "../core/pool";
import { TenantConfigUpdateSchema, TenantIdSchema } from "../core/tenant";
import { PolicyUpdateSchema } from "../objects/pool-settings";
import { CreateTenantSchema, KeyIdSchema, KeyLabelSchema, RotateSchema } from "./admin-tenants";
import { CreateRegistrationTokenSchema, RegistrationTokenIdSchema } from "./admin-registration";
import { RegistrationTokenSummarySchema } from "../db/registration-tokens";
import { TraceQuerySchema } from "./admin-traces";
import { HistoryQuerySchema } from "./admin-tuning";
import { DashboardQuerySchema } from "./admin-dashboard";
import { MetricsQuerySchema } from "./metrics";
import { PROMETHEUS_CONTENT_TYPE } from "../core/prometheus-text";
import { RegisterDatabaseSchema } from "./databases";
import { ChatRequestSchema, CompletionRequestSchema } from "./openai-schemas";
import * as R from "./openapi-responses";
import { PoolNameSchema, ReplayWorkflowSchema, RequestPoolSchema, SloScaleSchema, Text2SqlWorkflowSchema, WorkflowIdSchema } from "./schemas";

type Auth = "public" | "tenant" | "admin" | "registration";
type Method = "get" | "post" | "put" | "patch" | "delete";

const ERRORS = {
  400: "The request is invalid: malformed JSON, a field out of its limits, an unknown field",
  401: "Missing or invalid credential",
  404: "No such resource",
  409: "Conflicts with the current state",
  413: `The body is over ${LIMITS.http.maxBodyBytes} bytes`,
  422: "The request is well formed but cannot be served",
  429: "Over the tenant's quota: retry after Retry-After seconds",
  500: "`misconfigured`: the deployment's configuration is malformed (POOL_ROUTES); the message names the fault",
  502: "An upstream (database, connector, vLLM) failed",
  503: "Unavailable: no active instance in the pool, admin routes disabled, or the tenants database did not answer (Retry-After)",
  504: "The upstream call timed out",
} as const;
type ErrorStatus = keyof typeof ERRORS;

const RetryAfter = z.object({ "Retry-After": z.string().regex(/^\d+$/).meta({ description: "Seconds to wait before retrying" }) });
const Replayed = z.object({ "Idempotent-Replayed": z.literal("true").optional().meta({ description: "The answer is a replay of an earlier request with the same Idempotency-Key" }) });
/** What a route that starts work means by 503: no instance, or the pool predicts a missed SLO (with Retry-After). */
const OVERLOADED = "No active instance, or overloaded: the pool predicts the SLO would be missed (Retry-After says when to try again)";

const json = (schema: z.ZodType) => ({ "application/json": { schema } });
/** `meta({ id })` makes a schema a named component (components/schemas) that operations reference. */
const ERROR_BODY = R.ErrorBodySchema.meta({ id: "ErrorBody" });

interface Operation {
  method: Method;
  path: string;
  auth: Auth;
  summary: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** An absent body is allowed (the route uses defaults). */
  bodyOptional?: boolean;
  status?: 200 | 201 | 202;
  response: z.ZodType;
  /** Besides 401 (every authenticated route) and 413 (every route with a body). */
  errors?: ErrorStatus[];
  /** The route starts work: 429 and 503 carry Retry-After. */
  starts?: boolean;
  extraResponses?: Record<string, { description: string; content?: Record<string, { schema: z.ZodType }>; headers?: z.ZodObject }>;
}

const SUCCESS = { 200: "OK", 201: "Created", 202: "Accepted: the workflow runs; poll links.self" } as const;

const SECURITY: Record<Auth, Record<string, string[]>[]> = { public: [], tenant: [{ tenantKey: [] }], admin: [{ adminToken: [] }], registration: [{ registrationToken: [] }] };

function errorResponses(op: Operation): Record<string, { description: string; content: ReturnType<typeof json>; headers?: z.ZodObject }> {
  const statuses = new Set<ErrorStatus>(op.errors ?? []);
  if (op.auth !== "public") statuses.add(401);
  // The tenant's key is checked against D1 on every request: when D1 does not answer, 503 with Retry-After.
  if (op.auth === "tenant" || op.auth === "registration") statuses.add(503);
  if (op.body !== undefined) statuses.add(413);
  if (op.starts === true) statuses.add(429).add(503);
  const out: Record<string, { description: string; content: ReturnType<typeof json>; headers?: z.ZodObject }> = {};
  for (const s of [...statuses].sort((a, b) => a - b)) {
    const retry = s === 429 || (s === 503 && (op.starts === true || op.auth === "tenant" || op.auth === "registration"));
    out[String(s)] = { description: s === 503 && op.starts === true ? OVERLOADED : ERRORS[s], content: json(ERROR_BODY), ...(retry ? { headers: RetryAfter } : {}) };
  }
  return out;
}

function register(registry: OpenAPIRegistry, op: Operation): void {
  registry.registerPath({
    method: op.method,
    path: op.path,
    summary: op.summary,
    tags: [op.tag],
    security: SECURITY[op.auth],
    request: {
      ...(op.params === undefined ? {} : { params: op.params }),
      ...(op.query === undefined ? {} : { query: op.query }),
      ...(op.headers === undefined ? {} : { headers: op.headers }),
      ...(op.body === undefined ? {} : { body: { required: op.bodyOptional !== true, content: json(op.body) } }),
    },
    responses: {
      [String(op.status ?? 200)]: { description: SUCCESS[op.status ?? 200], content: json(op.response) },
      ...op.extraResponses,
      ...errorResponses(op),
    },
  });
}

const PoolParam = PoolNameSchema.unwrap();
const InstanceId = InstanceRegistrationSchema.shape.id;
const pool = z.object({ pool: PoolParam });
const instance = z.object({ pool: PoolParam, id: InstanceId });
const tenant = z.object({ tenant: TenantIdSchema });
const tenantKey = z.object({ tenant: TenantIdSchema, key: KeyIdSchema });
const registrationToken = z.object({ pool: PoolParam, token: RegistrationTokenIdSchema });
const workflowId = z.object({ id: WorkflowIdSchema });
const databaseName = z.object({ name: DatabaseNameSchema });

function operations(): Operation[] {
  // `pool` and `sloScale` sit beside a DAG's own fields (src/api/workflow-request.ts).
  const dag = DagRequestSchema.extend({ pool: RequestPoolSchema, sloScale: SloScaleSchema });
  const workflowRequest = z
    .discriminatedUnion("kind", [ReplayWorkflowSchema.meta({ id: "ReplayWorkflow" }), dag.meta({ id: "DagWorkflow" }), Text2SqlWorkflowSchema.meta({ id: "Text2SqlWorkflow" })])
    .meta({ id: "WorkflowRequest" });
  const view = R.WorkflowViewSchema.meta({ id: "WorkflowView" });
  const openaiHeaders = z.object({
    "x-slo-ms": z.string().regex(/^\d+$/).optional().meta({ description: `Deadline in pool-clock milliseconds, 1 to ${LIMITS.openai.maxSloMs}` }),
    "x-hexflow-pool": PoolParam.optional().meta({ description: 'The pool to run on; absent, POOL_ROUTES picks it from `model`' }),
  });
  const openaiOk = (schema: z.ZodType) => ({
    "200": {
      description: "The completion (JSON), or with `stream: true` OpenAI's server-sent events",
      content: { ...json(schema), "text/event-stream": { schema: R.EventStreamSchema } },
      headers: z.object({ "X-Hexflow-Workflow-Id": z.string().meta({ description: "The one-call workflow that ran the request" }) }),
    },
  });
  // 500 `misconfigured`: POOL_ROUTES is malformed (src/api/pool-routes.ts).
  const openaiErrors: ErrorStatus[] = [400, 404, 409, 500, 502, 504];
  return [
    { method: "get", path: "/health", auth: "public", tag: "meta", summary: "Liveness", response: z.object({ ok: z.literal(true) }) },
    { method: "get", path: "/openapi.json", auth: "public", tag: "meta", summary: "This document", response: z.object({ openapi: z.string() }).loose() },

    {
      method: "post", path: "/v1/workflows", auth: "tenant", tag: "workflows", summary: "Start a workflow (replay, dag or text2sql)",
      headers: z.object({
        prefer: z.string().optional().meta({ description: "`wait=N`: hold the answer up to N s (at most 60) for the workflow to end; then 200 with its view" }),
        "idempotency-key": IdempotencyKeySchema.optional().meta({
          description: `Per tenant, kept ${IDEMPOTENCY_RETENTION_MS / 3_600_000} h: a repeat of the same request (byte-identical body) answers the first one's workflow with \`Idempotent-Replayed: true\` and starts nothing; a refused request frees the key`,
        }),
      }),
      body: workflowRequest, status: 202, response: R.WorkflowAcceptedSchema, errors: [400, 404, 500], starts: true,
      extraResponses: {
        "200": { description: "Ended within `Prefer: wait=N`", content: json(view) },
        "202": { description: SUCCESS[202], content: json(R.WorkflowAcceptedSchema), headers: Replayed },
        "409": { description: "`idempotency_in_progress`: a request with this Idempotency-Key is still starting its workflow", content: json(ERROR_BODY), headers: RetryAfter },
        "422": { description: "`idempotency_key_reused`: this Idempotency-Key was used with a different request body", content: json(ERROR_BODY) },
      },
    },
    { method: "get", path: "/v1/workflows/{id}", auth: "tenant", tag: "workflows", summary: "A workflow's status, stages, calls and answer", params: workflowId, response: view, errors: [404] },
    {
      method: "get", path: "/v1/workflows/{id}/events", auth: "tenant", tag: "workflows", summary: "A workflow's progress as Server-Sent Events, replayed from the start or after Last-Event-ID, then live until workflow_done",
      params: workflowId,
      headers: z.object({ "last-event-id": z.string().regex(/^\d+$/).optional().meta({ description: "Resume after this event id (EventSource sends it when it reconnects)" }) }),
      query: z.object({ lastEventId: z.string().regex(/^\d+$/).optional().meta({ description: "As Last-Event-ID, for clients that cannot set headers (the header wins)" }) }),
      response: WorkflowEventDataSchema, errors: [400, 404],
      extraResponses: {
        "200": {
          description: "text/event-stream: `retry:` once, then events (`id:` the event's sequence number, `event:` its type, `data:` its JSON, described here), `: keep-alive` comments every 15 s; the server closes the stream after `workflow_done`",
          content: { "text/event-stream": { schema: WorkflowEventDataSchema.meta({ id: "WorkflowEvent" }) } },
        },
        "204": { description: "The workflow ended at or before Last-Event-ID: nothing is left to send (an EventSource stops reconnecting)" },
      },
    },
    { method: "delete", path: "/v1/workflows/{id}", auth: "tenant", tag: "workflows", summary: "Cancel a workflow", params: workflowId, response: R.WorkflowCancelledSchema, errors: [404, 409] },

    { method: "post", path: "/v1/databases", auth: "tenant", tag: "databases", summary: "Register a database for Text-to-SQL (create-only)", body: RegisterDatabaseSchema, status: 201, response: R.DatabaseDetailSchema, errors: [400, 409, 422, 502] },
    { method: "get", path: "/v1/databases", auth: "tenant", tag: "databases", summary: "The tenant's databases", response: R.DatabaseListSchema },
    { method: "get", path: "/v1/databases/{name}", auth: "tenant", tag: "databases", summary: "A database and its schema", params: databaseName, response: R.DatabaseDetailSchema, errors: [404] },
    { method: "delete", path: "/v1/databases/{name}", auth: "tenant", tag: "databases", summary: "Unregister a database", params: databaseName, response: R.DatabaseDeletedSchema, errors: [404] },

    { method: "get", path: "/v1/models", auth: "tenant", tag: "openai", summary: "OpenAI-compatible model list: the models POOL_ROUTES routes to a pool", response: R.ModelListSchema, errors: [500] },
    { method: "post", path: "/v1/chat/completions", auth: "tenant", tag: "openai", summary: "OpenAI-compatible chat completion (one scheduled call)", headers: openaiHeaders, body: ChatRequestSchema, response: R.ChatCompletionSchema, errors: openaiErrors, starts: true, extraResponses: openaiOk(R.ChatCompletionSchema) },
    { method: "post", path: "/v1/completions", auth: "tenant", tag: "openai", summary: "OpenAI-compatible completion (one scheduled call)", headers: openaiHeaders, body: CompletionRequestSchema, response: R.CompletionSchema, errors: openaiErrors, starts: true, extraResponses: openaiOk(R.CompletionSchema) },

    { method: "get", path: "/v1/traces", auth: "tenant", tag: "traces", summary: "Export the tenant's own traces of a pool over a time window", query: TraceQuerySchema, response: R.TraceExportSchema, errors: [400] },
    { method: "get", path: "/admin/traces", auth: "admin", tag: "admin", summary: "Export a pool's traces over a time window (every tenant's)", query: TraceQuerySchema, response: R.TraceExportSchema, errors: [400, 503] },
    { method: "post", path: "/admin/tenants", auth: "admin", tag: "tenants", summary: "Create a tenant and its first key", body: CreateTenantSchema, status: 201, response: R.TenantCreatedSchema, errors: [400, 409, 503] },
    { method: "get", path: "/admin/tenants", auth: "admin", tag: "tenants", summary: "List tenants", response: R.TenantListSchema, errors: [503] },
    { method: "get", path: "/admin/tenants/{tenant}", auth: "admin", tag: "tenants", summary: "A tenant, its keys and its usage", params: tenant, response: R.TenantDetailSchema, errors: [404, 503] },
    { method: "patch", path: "/admin/tenants/{tenant}", auth: "admin", tag: "tenants", summary: "Update a tenant's SLO class, quota or overload behaviour", params: tenant, body: TenantConfigUpdateSchema, response: R.TenantUpdatedSchema, errors: [400, 404, 503] },
    { method: "get", path: "/admin/tenants/{tenant}/keys", auth: "admin", tag: "tenants", summary: "A tenant's keys (prefixes only)", params: tenant, response: R.KeyListSchema, errors: [404, 503] },
    { method: "post", path: "/admin/tenants/{tenant}/keys", auth: "admin", tag: "tenants", summary: "Issue a key", params: tenant, body: KeyLabelSchema, bodyOptional: true, status: 201, response: R.KeyIssuedSchema, errors: [400, 404, 503] },
    { method: "post", path: "/admin/tenants/{tenant}/keys/{key}/rotate", auth: "admin", tag: "tenants", summary: "Rotate a key, keeping the old one for graceS seconds", params: tenantKey, body: RotateSchema, bodyOptional: true, status: 201, response: R.KeyRotatedSchema, errors: [400, 404, 409, 503] },
    { method: "delete", path: "/admin/tenants/{tenant}/keys/{key}", auth: "admin", tag: "tenants", summary: "Revoke a key", params: tenantKey, response: R.KeyRevokedSchema, errors: [404, 503] },

    { method: "get", path: "/admin/pools/{pool}/tuning", auth: "admin", tag: "tuning", summary: "α tuning decisions with their simulated curves", params: pool, query: HistoryQuerySchema, response: R.TuningHistorySchema, errors: [400, 503] },
    { method: "get", path: "/admin/pools/{pool}/dashboard", auth: "admin", tag: "pools", summary: "The data of the operator dashboard (/dashboard): instances, latency / SLO / throughput series, α decisions, recent workflows' call timelines", params: pool, query: DashboardQuerySchema, response: R.DashboardSchema, errors: [400, 503] },
    { method: "post", path: "/admin/pools/{pool}/tune", auth: "admin", tag: "tuning", summary: "Tune α now (runs the tuner Worker)", params: pool, response: R.TuningResultSchema, errors: [400, 503] },

    { method: "get", path: "/admin/pools/{pool}", auth: "admin", tag: "pools", summary: "A pool: policy, α, instances and their load", params: pool, response: R.PoolViewSchema, errors: [503] },
    { method: "post", path: "/admin/pools/{pool}/instances", auth: "admin", tag: "pools", summary: "Register a vLLM server", params: pool, body: InstanceRegistrationSchema, status: 201, response: InstanceRecordSchema, errors: [400, 409, 503] },
    { method: "patch", path: "/admin/pools/{pool}/instances/{id}", auth: "admin", tag: "pools", summary: "Update an instance", params: instance, body: InstanceUpdateSchema, response: InstanceRecordSchema, errors: [400, 404, 503] },
    { method: "post", path: "/admin/pools/{pool}/instances/{id}/drain", auth: "admin", tag: "pools", summary: "Stop sending new calls to an instance", params: instance, response: InstanceRecordSchema, errors: [404, 503] },
    { method: "post", path: "/admin/pools/{pool}/instances/{id}/activate", auth: "admin", tag: "pools", summary: "Send calls to an instance again", params: instance, response: InstanceRecordSchema, errors: [404, 503] },
    { method: "delete", path: "/admin/pools/{pool}/instances/{id}", auth: "admin", tag: "pools", summary: "Remove an instance", params: instance, response: InstanceRecordSchema, errors: [404, 503] },
    { method: "get", path: "/admin/pools/{pool}/instances/{id}/queue", auth: "admin", tag: "pools", summary: "An instance's queue and admissions", params: instance, response: R.InstanceQueueSchema, errors: [404, 503] },
    {
      method: "get", path: "/metrics", auth: "admin", tag: "admin", summary: "Prometheus metrics: workflow latency and SLO outcomes, instance queues and health, laxity, dispatches, α (README \"Metrics\")",
      query: MetricsQuerySchema, response: z.string(), errors: [400, 503],
      extraResponses: { "200": { description: "Prometheus text exposition format 0.0.4", content: { [PROMETHEUS_CONTENT_TYPE]: { schema: z.string() } } } },
    },
    ...registrationOperations(),
    { method: "put", path: "/admin/pools/{pool}/policy", auth: "admin", tag: "pools", summary: "Set the pool's policy, α (pinned or tuned), calibration and admission", params: pool, body: PolicyUpdateSchema, response: R.PoolViewSchema, errors: [400, 503] },
  ];
}

/** GPU hosts registering themselves (src/api/register.ts) and the tokens that let them (src/api/admin-registration.ts). */
function registrationOperations(): Operation[] {
  const tokenInfo = RegistrationTokenSummarySchema.meta({ id: "RegistrationToken" });
  return [
    {
      method: "post", path: "/admin/pools/{pool}/registration-tokens", auth: "admin", tag: "registration", summary: "Create a registration token for GPU hosts of this pool (shown once)",
      params: pool, body: CreateRegistrationTokenSchema, bodyOptional: true, status: 201, response: z.object({ token: z.string().meta({ description: "hfr_...: shown only here" }), tokenInfo }), errors: [400, 503],
    },
    { method: "get", path: "/admin/pools/{pool}/registration-tokens", auth: "admin", tag: "registration", summary: "The pool's registration tokens (prefixes only)", params: pool, response: z.object({ tokens: z.array(tokenInfo) }), errors: [400, 503] },
    { method: "delete", path: "/admin/pools/{pool}/registration-tokens/{token}", auth: "admin", tag: "registration", summary: "Revoke a registration token at once", params: registrationToken, response: z.object({ tokenInfo }), errors: [400, 404, 503] },
    {
      method: "put", path: "/register/pools/{pool}/instances/{id}", auth: "registration", tag: "registration", summary: "A GPU host registers its vLLM server, or re-registers it after a reboot (the same id: updated, its state kept)",
      params: instance, body: InstanceRegistrationSchema, status: 201, response: InstanceRecordSchema, errors: [400, 409],
      extraResponses: { "200": { description: "Re-registered: the instance existed and is updated", content: json(InstanceRecordSchema) } },
    },
  ];
}

export function buildOpenApiDocument(): ReturnType<OpenApiGeneratorV31["generateDocument"]> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "tenantKey", { type: "http", scheme: "bearer", description: "A tenant API key (`hfk_...`), issued by POST /admin/tenants" });
  registry.registerComponent("securitySchemes", "adminToken", { type: "http", scheme: "bearer", description: "The gateway's ADMIN_TOKEN" });
  registry.registerComponent("securitySchemes", "registrationToken", { type: "http", scheme: "bearer", description: "A pool's registration token (`hfr_...`), issued by POST /admin/pools/{pool}/registration-tokens: opens PUT /register/pools/{pool}/instances/{id} and nothing else" });
  for (const op of operations()) register(registry, op);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "hexflow gateway",
      version: "0.0.0",
      description: `Multi-stage LLM workflows scheduled on vLLM GPU pools. Every error is \`{ "error": { "code", "message" } }\`. Limits: src/core/limits.ts.`,
    },
    servers: [{ url: "/" }],
  });
}

let memo: ReturnType<typeof buildOpenApiDocument> | undefined;

/** Built on first request and kept for the isolate's life: the schemas cannot change while it runs. */
export function openApiDocument(): ReturnType<typeof buildOpenApiDocument> {
  memo ??= buildOpenApiDocument();
  return memo;
}
