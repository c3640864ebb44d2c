/**
 * `Idempotency-Key` on `POST /v1/workflows`: what a key may look like, and what a repeated key means given
 * the record the tenant keeps of its first use. Pure: the TenantObject stores the record and passes `now`.
 *
 * A key is claimed before any work is done, so of two racing requests with one key only one starts anything.
 * A claim is `pending` until its workflow has started; a refused start frees it (the client may retry with the
 * same key), and one left pending by a Worker that died mid-way is taken over after STALE_MS, with the same
 * workflow id, so the retry converges on the workflow the first attempt may already have created.
 */
import { z } from "zod";
import { LIMITS } from "./limits";

/** How long a key is remembered, from its first use. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000;
/**
 * A pending claim this old is taken as abandoned. A live start takes well under a second (a few RPCs); 30 s
 * leaves a wide margin and is still shorter than most clients' retry budgets.
 */
export const IDEMPOTENCY_STALE_MS = 30_000;

/** Visible ASCII only: a key is compared byte for byte, so nothing a proxy might fold or trim. */
export const IdempotencyKeySchema = z
  .string()
  .min(1, "Idempotency-Key must not be empty")
  .max(LIMITS.idempotency.maxKeyChars, `Idempotency-Key may have at most ${LIMITS.idempotency.maxKeyChars} characters`)
  .regex(/^[\x21-\x7e]+$/, "Idempotency-Key may hold only visible ASCII characters (no spaces or control characters)");

export const IdempotencyStateSchema = z.enum(["pending", "started"]);

export const IdempotencyRecordSchema = z.object({
  bodySha256: z.string(),
  workflowId: z.string(),
  state: IdempotencyStateSchema,
  createdAtMs: z.number(),
  updatedAtMs: z.number(),
});
export type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>;

/**
 * - fresh: the key is now this request's, pending, for `workflowId`: start it.
 * - replay: the key's workflow started: answer with it, start nothing.
 * - takeover: the key's first request stalled before saying its workflow started; this request now holds the
 *   claim and must bring the same `workflowId` to a start (it may exist already).
 * - mismatch: the key was used with another request.
 * - in_progress: the key's first request is still starting its workflow.
 */
export type IdempotencyClaim =
  | { kind: "fresh"; workflowId: string }
  | { kind: "replay"; workflowId: string }
  | { kind: "takeover"; workflowId: string }
  | { kind: "mismatch" }
  | { kind: "in_progress"; retryAfterS: number };

export function decideClaim(existing: IdempotencyRecord | undefined, bodySha256: string, newWorkflowId: string, nowMs: number): IdempotencyClaim {
  if (existing === undefined || existing.createdAtMs <= nowMs - IDEMPOTENCY_RETENTION_MS) return { kind: "fresh", workflowId: newWorkflowId };
  if (existing.bodySha256 !== bodySha256) return { kind: "mismatch" };
  if (existing.state === "started") return { kind: "replay", workflowId: existing.workflowId };
  if (nowMs >= existing.updatedAtMs + IDEMPOTENCY_STALE_MS) return { kind: "takeover", workflowId: existing.workflowId };
  // Not the time until takeover: a live first request ends within a second, and then the retry is a replay.
  return { kind: "in_progress", retryAfterS: 1 };
}
