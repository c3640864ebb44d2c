/**
 * The chaos harness's side of the gateway's API: submissions with an `Idempotency-Key` that are retried with
 * the same key when the answer is lost or a 5xx, polls that say "unknown" rather than fail, and the tenant's
 * traces. Every answer is parsed with zod; nothing here throws on what a gateway under chaos may answer.
 */
import { z } from "zod";
import { tenantHeaders, type Gateway } from "./replay";

/** One request's bound: a gateway that neither answers nor closes must not stall the harness. */
const REQUEST_TIMEOUT_MS = 30_000;

const ErrorSchema = z.object({ code: z.string(), message: z.string() });
const ErrorBodySchema = z.object({ error: ErrorSchema });
const AcceptedSchema = z.object({ id: z.string() });

const CallViewSchema = z.object({
  id: z.string(),
  instance: z.string().nullable().optional(),
  admittedMs: z.number().nullable().optional(),
  finishedMs: z.number().nullable().optional(),
  /** Optional: executions and failures of the call, if the gateway reports them. */
  attempts: z.number().int().optional(),
  failures: z.array(z.unknown()).optional(),
  error: z.unknown().optional(),
});

export const WorkflowViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  error: ErrorSchema.optional(),
  latencyMs: z.number().nullable(),
  sloMs: z.number().nullable(),
  sloMet: z.boolean().nullable(),
  stages: z.array(z.object({ calls: z.array(CallViewSchema) })),
});
export type WorkflowView = z.infer<typeof WorkflowViewSchema>;

export const TERMINAL_STATUSES = new Set(["succeeded", "failed", "cancelled"]);

export interface SubmitOutcome {
  /** Every workflow id a 202 named for this key (more than one: a duplicate). */
  ids: string[];
  /** 202s marked `Idempotent-Replayed: true`. */
  replayed: number;
  attempts: number;
  /** Why each attempt before the last one failed ("503 overloaded", "network_error", ...). */
  retriedFor: string[];
  /** The last refusal (a 4xx, or the last 5xx/network error once the retries ran out); absent when accepted. */
  refusal?: { status: number | null; code: string; message: string };
}

export interface RetryPolicy {
  maxAttempts: number;
  /** First backoff, real ms; doubles per attempt up to 8x. */
  backoffMs: number;
  /** No new attempt starts this many real ms after the first one. */
  maxTotalMs: number;
}

/** Longest Retry-After honoured (s): the gateway takes over an abandoned key after 30 s (src/core/idempotency.ts). */
const MAX_RETRY_AFTER_S = 35;

const errorText = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ""}` : String(e));

/**
 * POST /v1/workflows with `Idempotency-Key: key`. A network error or a 5xx is retried with the same key and body,
 * and so is `409 idempotency_in_progress` (the key's first request is still starting its workflow, or died
 * doing so), after its Retry-After, as the API asks; any other answer is final.
 */
export async function submitWithKey(gw: Gateway, body: unknown, key: string, retry: RetryPolicy): Promise<SubmitOutcome> {
  const out: SubmitOutcome = { ids: [], replayed: 0, attempts: 0, retriedFor: [] };
  const text = JSON.stringify(body);
  const started = performance.now();
  for (let attempt = 1; attempt <= retry.maxAttempts; attempt++) {
    out.attempts = attempt;
    let status: number | null = null;
    let retryAfterS = 0;
    try {
      const res = await fetch(`${gw.url}/v1/workflows`, { method: "POST", headers: tenantHeaders(gw, { "idempotency-key": key }), body: text, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      status = res.status;
      const raw = await res.text();
      let json: unknown = undefined;
      try {
        json = JSON.parse(raw);
      } catch {
        // not JSON (a proxy's page while the Worker restarts): reported with the raw text
      }
      if (res.status === 202) {
        const ok = AcceptedSchema.safeParse(json);
        if (ok.success) {
          if (!out.ids.includes(ok.data.id)) out.ids.push(ok.data.id);
          if (res.headers.get("idempotent-replayed") === "true") out.replayed += 1;
          delete out.refusal;
          return out;
        }
      }
      const err = ErrorBodySchema.safeParse(json);
      out.refusal = err.success ? { status, ...err.data.error } : { status, code: `http_${res.status}`, message: raw.slice(0, 200) };
      const inProgress = res.status === 409 && out.refusal.code === "idempotency_in_progress";
      if (inProgress) retryAfterS = Math.min(MAX_RETRY_AFTER_S, Number(res.headers.get("retry-after") ?? "1") || 1);
      if (res.status < 500 && !inProgress) return out;
    } catch (e) {
      out.refusal = { status, code: "network_error", message: errorText(e) };
    }
    const waitMs = Math.max(retry.backoffMs * 2 ** Math.min(3, attempt - 1), retryAfterS * 1000);
    if (attempt === retry.maxAttempts || performance.now() + waitMs - started > retry.maxTotalMs) break;
    if (out.refusal !== undefined) out.retriedFor.push(`${out.refusal.status ?? "no answer"} ${out.refusal.code}`);
    await new Promise((r) => setTimeout(r, waitMs));
  }
  return out;
}

export type PollResult = { kind: "view"; view: WorkflowView } | { kind: "not-found" } | { kind: "unknown"; message: string };

/** GET /v1/workflows/:id: its view, a 404, or "unknown" (the gateway did not answer usefully). */
export async function pollWorkflow(gw: Gateway, id: string): Promise<PollResult> {
  try {
    const res = await fetch(`${gw.url}/v1/workflows/${encodeURIComponent(id)}`, { headers: tenantHeaders(gw), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const raw = await res.text();
    if (res.status === 404) return { kind: "not-found" };
    if (res.status !== 200) return { kind: "unknown", message: `HTTP ${res.status} ${raw.slice(0, 200)}` };
    const view = WorkflowViewSchema.safeParse(JSON.parse(raw));
    return view.success ? { kind: "view", view: view.data } : { kind: "unknown", message: `unexpected view: ${view.error.message.slice(0, 200)}` };
  } catch (e) {
    return { kind: "unknown", message: errorText(e) };
  }
}

const TraceRowsSchema = z.object({
  workflows: z.array(z.object({ workflow_id: z.string(), status: z.string(), error_code: z.string().nullable() })),
  truncated: z.boolean(),
});
export type TraceRows = z.infer<typeof TraceRowsSchema>;

/** The tenant's own trace rows (GET /v1/traces, format=rows) of workflows created in [fromMs, toMs). */
export async function fetchTraceRows(gw: Gateway, pool: string, fromMs: number, toMs: number): Promise<TraceRows> {
  const q = new URLSearchParams({ pool, from: String(Math.floor(fromMs)), to: String(Math.ceil(toMs)), format: "rows", limit: "50000" });
  const res = await fetch(`${gw.url}/v1/traces?${q.toString()}`, { headers: tenantHeaders(gw), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const raw = await res.text();
  if (!res.ok) throw new Error(`GET /v1/traces answered ${res.status}: ${raw.slice(0, 300)}`);
  return TraceRowsSchema.parse(JSON.parse(raw));
}

/** The emulator's fault control (POST /admin/fault). */
export async function setEmulatorFault(url: string, mode: string, count?: number): Promise<void> {
  const res = await fetch(`${url}/admin/fault`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(count === undefined ? { mode } : { mode, count }), signal: AbortSignal.timeout(5_000) });
  await res.text();
  if (!res.ok) throw new Error(`${url}/admin/fault answered ${res.status}`);
}
