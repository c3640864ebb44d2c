/**
 * A workflow's progress events (GET /v1/workflows/:id/events): their payloads, the Server-Sent Events
 * text they become, and the reconnect cursor. Pure: the WorkflowObject stores events as the JSON of these
 * schemas (src/objects/workflow-events.ts) and streams them through `sseFrame`.
 *
 * Times named `...S` are pool-clock seconds (emulated seconds on an emulated pool), like the workflow's
 * SLO; `atMs` is the real time the event was recorded. Every event of a workflow has a sequence number,
 * strictly increasing from 1, which is the SSE `id:`, so a client that reconnects with Last-Event-ID
 * misses nothing and sees nothing twice.
 *
 * Why no cap on the number of events: LIMITS bounds it. A workflow has at most 500 calls (replay; a DAG
 * 64, a text2sql 8 candidates × 11 attempts plus routing and testing); each call is dispatched and
 * finished once, plus one failure and one dispatch per retry (MAX_CALL_ATTEMPTS − 1) or hand-back
 * (MAX_CALL_EVACUATIONS); plus one event per stage, per corrected candidate and the end. At a few hundred
 * bytes per event, even the worst replay stays far below a Durable Object's storage limits.
 */
import { z } from "zod";

const Base = { atMs: z.number() };

export const StageReleasedSchema = z.object({
  type: z.literal("stage_released"),
  ...Base,
  stage: z.number().int().nonnegative(),
  step: z.string(),
  calls: z.number().int().nonnegative(),
  /** The stage's SLO budget and the deadline every call of it got. */
  budgetS: z.number(),
  deadlineS: z.number(),
});

export const CallDispatchedSchema = z.object({
  type: z.literal("call_dispatched"),
  ...Base,
  callId: z.string(),
  stage: z.number().int().nonnegative(),
  step: z.string(),
  instanceId: z.string(),
  /** The instance's GPU type. */
  gpu: z.string(),
  estimateS: z.number(),
  /** Deadline − the time of dispatch (release or failure) − the estimate on this instance; negative: late already. */
  laxityS: z.number(),
  /** 0 when released, one more for each re-dispatch after a failure or a hand-back. */
  dispatch: z.number().int().nonnegative(),
});

const ErrorSchema = z.object({ code: z.string(), message: z.string() });

export const CallFinishedSchema = z.object({
  type: z.literal("call_finished"),
  ...Base,
  callId: z.string(),
  instanceId: z.string(),
  dispatch: z.number().int().nonnegative(),
  ok: z.boolean(),
  /** From the stage's release to the call's end (queueing and failed attempts included). */
  latencyS: z.number(),
  /** From admission to vLLM to the end, on this instance. */
  serviceS: z.number(),
  laxityAtAdmissionS: z.number(),
  completionTokens: z.number().optional(),
  /** Why the call failed for good (ok: false). */
  error: ErrorSchema.optional(),
});

export const CallFailedSchema = z.object({
  type: z.literal("call_failed"),
  ...Base,
  callId: z.string(),
  instanceId: z.string(),
  dispatch: z.number().int().nonnegative(),
  error: ErrorSchema,
  /** Always true: a failure that ends the call is a `call_finished` with ok: false. */
  willRetry: z.literal(true),
  /** Handed back unrun (its instance drained or turned unhealthy): no attempt was spent. */
  evacuated: z.boolean(),
});

export const CorrectionRoundSchema = z.object({
  type: z.literal("correction_round"),
  ...Base,
  /** The workflow's self-correction round, from 1; each candidate that needs it has one event per round. */
  round: z.number().int().positive(),
  candidate: z.number().int().nonnegative(),
  /** The candidate's query that failed, when the model wrote one. */
  sql: z.string().optional(),
  /** "error": it did not run (or no SQL was found); "empty": it ran and returned no rows. */
  status: z.enum(["error", "empty"]),
  error: z.string(),
});

export const WorkflowDoneSchema = z.object({
  type: z.literal("workflow_done"),
  ...Base,
  status: z.enum(["succeeded", "failed", "cancelled"]),
  /** From arrival to the end, when the workflow finished its last stage; null otherwise. */
  latencyS: z.number().nullable(),
  sloS: z.number(),
  sloMet: z.boolean().nullable(),
  error: ErrorSchema.optional(),
});

export const WorkflowEventDataSchema = z.discriminatedUnion("type", [
  StageReleasedSchema, CallDispatchedSchema, CallFinishedSchema, CallFailedSchema, CorrectionRoundSchema, WorkflowDoneSchema,
]);
export type WorkflowEventData = z.infer<typeof WorkflowEventDataSchema>;
export type WorkflowEventType = WorkflowEventData["type"];

/** An event as stored and sent: its sequence number is the SSE id. */
export interface WorkflowEvent {
  seq: number;
  data: WorkflowEventData;
}

/** What a reconnecting client asks for: the events after this one. */
export const LastEventIdSchema = z.string().regex(/^\d{1,15}$/, "Last-Event-ID must be the decimal id of an event (0 or more)").transform(Number);

/** The cursor from the Last-Event-ID header, else the `lastEventId` query (clients that cannot set headers); 0 when neither. */
export function lastEventId(header: string | undefined, query: string | undefined): { ok: true; value: number } | { ok: false; message: string } {
  const raw = header ?? query;
  if (raw === undefined) return { ok: true, value: 0 };
  const parsed = LastEventIdSchema.safeParse(raw.trim());
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: parsed.error.issues[0]?.message ?? "invalid Last-Event-ID" };
}

/** One event as Server-Sent Events text. JSON never holds a raw newline, so `data:` is one line. */
export function sseFrame(e: WorkflowEvent): string {
  return `id: ${e.seq}\nevent: ${e.data.type}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The reconnection delay a client should use (EventSource honours it), sent once per stream. */
export const sseRetry = (ms: number): string => `retry: ${ms}\n\n`;

/** A comment line: proxies see traffic, clients ignore it. */
export const SSE_KEEP_ALIVE = ": keep-alive\n\n";
