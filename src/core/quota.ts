/**
 * A tenant's quota decision: a token bucket for the start rate, a count for concurrency.
 *
 * Why a bucket: it allows the bursts agentic clients make (a user fans questions out) while holding the
 * sustained rate. Inputs: the bucket as stored, the quota, how many workflows run, and now (ms).
 * Trade-offs: Retry-After is exact for the rate (when the next token exists) but a guess for concurrency
 * (no one knows when a running workflow ends): one second, so clients poll gently instead of hammering.
 */
import type { TenantQuota } from "./tenant";

export interface Bucket {
  tokens: number;
  atMs: number;
}

export type QuotaDecision =
  | { ok: true; bucket: Bucket }
  | { ok: false; reason: "rate" | "concurrency"; retryAfterS: number; message: string };

/** The bucket refilled to `nowMs`; a clock that went backwards refills nothing. */
export function refill(bucket: Bucket | undefined, quota: TenantQuota, nowMs: number): Bucket {
  if (bucket === undefined) return { tokens: quota.burst, atMs: nowMs };
  const elapsedS = Math.max(0, nowMs - bucket.atMs) / 1000;
  return { tokens: Math.min(quota.burst, bucket.tokens + elapsedS * quota.workflowsPerS), atMs: Math.max(nowMs, bucket.atMs) };
}

export function admitStart(bucket: Bucket | undefined, quota: TenantQuota, running: number, nowMs: number): QuotaDecision {
  const b = refill(bucket, quota, nowMs);
  if (running >= quota.maxConcurrent) {
    return { ok: false, reason: "concurrency", retryAfterS: 1, message: `your tenant runs ${running} workflows, its limit is ${quota.maxConcurrent} at once` };
  }
  if (b.tokens < 1) {
    const retryAfterS = Math.max(1, Math.ceil((1 - b.tokens) / quota.workflowsPerS));
    return { ok: false, reason: "rate", retryAfterS, message: `your tenant may start ${quota.workflowsPerS} workflows per second (bursts of ${quota.burst})` };
  }
  return { ok: true, bucket: { tokens: b.tokens - 1, atMs: b.atMs } };
}

/** A start taken back (the pool refused the workflow): the token returns, up to the burst. */
export function refund(bucket: Bucket | undefined, quota: TenantQuota, nowMs: number): Bucket {
  const b = refill(bucket, quota, nowMs);
  return { tokens: Math.min(quota.burst, b.tokens + 1), atMs: b.atMs };
}
