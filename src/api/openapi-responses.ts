/**
 * zod schemas of the response bodies that had none (handlers build them as plain objects), for the
 * OpenAPI document only: responses are not parsed on the way out. Shapes the clients rely on are spelled
 * out; internal detail that may grow (call records, pool internals) is `loose`, so adding a field to a
 * view is not a breaking change of the document.
 */
import { z } from "zod";
import { InstanceRecordSchema } from "../core/pool";
import { SqlDialectSchema } from "../core/sql-dialect";
import { KeySummarySchema, TenantSchema } from "../db/tenants";
import { StatusSchema } from "../objects/workflow-store";
import type { ErrorBody } from "./errors";

/** The one error shape (src/api/errors.ts); OpenAI routes add OpenAI's `type` and `param` beside code and message. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string().meta({ example: "invalid_request" }), message: z.string() }),
}) satisfies z.ZodType<ErrorBody>;

const Ms = z.number().nullable();

export const WorkflowAcceptedSchema = z.object({
  id: z.string(),
  status: StatusSchema,
  sloMs: z.number().int(),
  bestEffort: z.boolean(),
  links: z.object({ self: z.string() }),
});

const CallViewSchema = z
  .object({ id: z.string(), instance: z.string(), inputTokens: z.number(), outputTokens: z.number(), completionTokens: z.number().nullable(), deadlineMs: Ms, finishedMs: Ms, output: z.string().optional() })
  .loose();

/** Times are pool-clock milliseconds since the workflow arrived (src/api/workflow-view.ts). */
export const WorkflowViewSchema = z.object({
  id: z.string(),
  kind: z.string(),
  status: StatusSchema,
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  createdAt: z.string(),
  sloMs: Ms,
  bestEffort: z.literal(true).optional(),
  latencyMs: Ms,
  sloMet: z.boolean().nullable(),
  text2sql: z
    .object({ sql: z.string().nullable(), columns: z.array(z.string()).nullable(), rows: z.array(z.array(z.unknown())).nullable(), truncated: z.boolean().nullable() })
    .loose()
    .optional()
    .meta({ description: "The answer of a text2sql workflow, its candidates, tests and SQL executions" }),
  stages: z.array(z.object({ index: z.number().int(), step: z.string(), releasedMs: Ms, finishedMs: Ms, durationMs: Ms, calls: z.array(CallViewSchema) })),
});

export const WorkflowCancelledSchema = z.object({ id: z.string(), status: StatusSchema });

const PublicTargetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("d1"), binding: z.string() }),
  z.object({ kind: z.literal("connector"), url: z.string() }).meta({ description: "The connector's token is never returned" }),
]);

export const DatabaseSummarySchema = z.object({ name: z.string(), target: PublicTargetSchema, dialect: SqlDialectSchema, tableCount: z.number().int(), createdAt: z.string() });
export const DatabaseDetailSchema = DatabaseSummarySchema.extend({ tables: z.array(z.object({ name: z.string() }).loose()) });
export const DatabaseListSchema = z.object({ databases: z.array(DatabaseSummarySchema) });
export const DatabaseDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) });

const UsageSchema = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });
const completionHead = { id: z.string(), created: z.number().int(), model: z.string(), usage: UsageSchema };
export const ChatCompletionSchema = z.object({
  ...completionHead,
  object: z.literal("chat.completion"),
  choices: z.array(z.object({ index: z.number().int(), message: z.object({ role: z.literal("assistant"), content: z.string() }), finish_reason: z.string() })),
});
export const CompletionSchema = z.object({
  ...completionHead,
  object: z.literal("text_completion"),
  choices: z.array(z.object({ index: z.number().int(), text: z.string(), finish_reason: z.string() })),
});
/** OpenAI's model list: the models POOL_ROUTES routes to a pool. */
export const ModelListSchema = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() })),
});
/** `stream: true`: OpenAI's server-sent events, `data: <chunk>` lines ending with `data: [DONE]`. */
export const EventStreamSchema = z.string().meta({ description: "text/event-stream of OpenAI chunks, then `data: [DONE]`" });

/** A key is in a response body exactly once: when it is issued. */
const IssuedKey = { key: z.string().meta({ description: "The API key: shown once, store it" }), keyInfo: KeySummarySchema };
export const TenantCreatedSchema = z.object({ tenant: TenantSchema, ...IssuedKey });
export const TenantListSchema = z.object({ tenants: z.array(TenantSchema) });
export const TenantDetailSchema = z.object({ tenant: TenantSchema, keys: z.array(KeySummarySchema), usage: z.object({}).loose() });
export const TenantUpdatedSchema = z.object({ tenant: TenantSchema });
export const KeyListSchema = z.object({ keys: z.array(KeySummarySchema) });
export const KeyIssuedSchema = z.object(IssuedKey);
export const KeyRotatedSchema = z.object({ ...IssuedKey, replaced: KeySummarySchema.optional() });
export const KeyRevokedSchema = z.object({ keyInfo: KeySummarySchema });

export const PoolViewSchema = z
  .object({
    policy: z.string(),
    alpha: z.number(),
    alphaVersion: z.number().int(),
    pinned: z.boolean(),
    calibration: z.enum(["observe", "apply"]),
    admission: z.enum(["enforce", "off"]),
    admissionState: z.object({ rateS: z.number(), committedS: z.number(), inFlight: z.number().int() }).nullable(),
    timeScale: z.number().nullable(),
    baseSloS: z.number().nullable(),
    instances: z.array(InstanceRecordSchema.extend({ loadS: z.number(), queued: z.number().int(), running: z.number().int() }).loose()),
  })
  .loose();
export const InstanceQueueSchema = z.object({ queued: z.number().int(), running: z.number().int(), queuePolicy: z.string(), admissions: z.array(z.object({}).loose()) });
export const TraceExportSchema = z
  .object({ pool: z.string(), fromMs: z.number(), toMs: z.number(), workflows: z.unknown(), truncated: z.boolean() })
  .loose()
  .meta({ description: "The reference trace format (format=reference) or the raw D1 rows (format=rows)" });
export const TuningHistorySchema = z.object({ pool: z.string(), decisions: z.array(z.object({}).loose()) });
export const DashboardSchema = z
  .object({
    pool: z.string(),
    nowMs: z.number(),
    view: PoolViewSchema,
    series: z.object({ windowS: z.number(), stepS: z.number(), spanS: z.number(), truncated: z.boolean(), points: z.array(z.object({ atMs: z.number(), ended: z.number().int(), p95S: z.number().nullable(), attainment: z.number().nullable(), throughputPerS: z.number(), sloP50S: z.number().nullable() })) }),
    tuning: z.array(z.object({}).loose()),
    recent: z.array(z.object({ id: z.string(), kind: z.string(), status: z.string(), calls: z.array(z.object({}).loose()) }).loose()),
  })
  .meta({ description: "What /dashboard draws: the pool view, P95 / attainment / throughput points over the window (each over the trailing spanS), α decisions oldest first, and the call timelines of the latest workflows" });
export const TuningResultSchema = z.object({}).loose().meta({ description: "The tuner's decision, as the tuner Worker returns it" });
