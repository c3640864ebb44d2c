import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { admitStart, refill, refund, type Bucket, type QuotaDecision } from "../core/quota";
import { IdempotencyKeySchema, type IdempotencyClaim } from "../core/idempotency";
import { TenantQuotaSchema, type TenantQuota } from "../core/tenant";
import { IDEMPOTENCY_MIGRATION, IdempotencyStore } from "./idempotency-store";
import { migrate, parseJson } from "./sqlite";

const MIGRATIONS = [
  `CREATE TABLE running (workflow_id TEXT PRIMARY KEY, started_ms INTEGER NOT NULL);
   CREATE TABLE state (key TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE workflows (workflow_id TEXT PRIMARY KEY, created_ms INTEGER NOT NULL);
   CREATE INDEX workflows_created ON workflows (created_ms)`,
  IDEMPOTENCY_MIGRATION,
];

const BucketSchema = z.object({ tokens: z.number(), atMs: z.number() });

/**
 * A backstop, not the mechanism: every ended workflow releases its slot from its own alarm (retried until
 * it lands). A slot older than this is taken as leaked, so a lost release cannot lock a tenant out for good.
 */
const LEASE_MS = 48 * 3600 * 1000;
/** How long a tenant can read a workflow it started (the index says which ids are its own). */
export const WORKFLOW_RETENTION_MS = 30 * 86_400_000;

export interface TenantUsage {
  running: number;
  tokens: number;
  quota: TenantQuota;
}

/**
 * One per tenant: its quota state and the index of its workflows. A start takes a token from the rate bucket
 * and a concurrency slot named by the workflow id, so a repeated acquire or release (a retried request, a
 * re-run alarm) counts once. The quota comes with each call from the tenant's record, so a changed quota
 * applies at the next start. The index answers "is this id one of ours?" before any WorkflowObject is touched:
 * another tenant's id and a made-up one never reach (or create) an object. It also keeps the tenant's
 * Idempotency-Keys (src/objects/idempotency-store.ts): one object per tenant makes a claim atomic.
 */
export class TenantObject extends DurableObject<Env> {
  private readonly idempotency: IdempotencyStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage.sql, MIGRATIONS));
    this.idempotency = new IdempotencyStore(ctx.storage.sql);
  }

  /** Claims `key` for a start of `newWorkflowId`, or says what the key already stands for. */
  claimIdempotency(key: string, bodySha256: string, newWorkflowId: string): IdempotencyClaim {
    return this.idempotency.claim(IdempotencyKeySchema.parse(key), bodySha256, newWorkflowId, Date.now());
  }

  idempotencyStarted(key: string, workflowId: string): { updated: boolean } {
    return this.idempotency.started(key, workflowId, Date.now());
  }

  releaseIdempotency(key: string, workflowId: string): { released: boolean } {
    return this.idempotency.release(key, workflowId);
  }

  acquire(workflowId: string, quotaInput: TenantQuota): QuotaDecision {
    const quota = TenantQuotaSchema.parse(quotaInput);
    const now = Date.now();
    if (this.holds(workflowId)) return { ok: true, bucket: this.bucket() ?? { tokens: 0, atMs: now } };
    this.ctx.storage.sql.exec("DELETE FROM running WHERE started_ms < ?", now - LEASE_MS);
    this.ctx.storage.sql.exec("DELETE FROM workflows WHERE created_ms < ?", now - WORKFLOW_RETENTION_MS);
    const decision = admitStart(this.bucket(), quota, this.running(), now);
    if (!decision.ok) return decision;
    this.saveBucket(decision.bucket);
    this.ctx.storage.sql.exec("INSERT INTO running (workflow_id, started_ms) VALUES (?, ?)", workflowId, now);
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO workflows (workflow_id, created_ms) VALUES (?, ?)", workflowId, now);
    return decision;
  }

  /** Frees the workflow's slot; with `refundUnder`, its token returns too (the pool refused it, so nothing ran). */
  release(workflowId: string, refundUnder?: TenantQuota): { released: boolean } {
    if (!this.holds(workflowId)) return { released: false };
    this.ctx.storage.sql.exec("DELETE FROM running WHERE workflow_id = ?", workflowId);
    if (refundUnder !== undefined) {
      // Refused before it started: it never existed, as far as the tenant's reads go.
      this.ctx.storage.sql.exec("DELETE FROM workflows WHERE workflow_id = ?", workflowId);
      this.saveBucket(refund(this.bucket(), TenantQuotaSchema.parse(refundUnder), Date.now()));
    }
    return { released: true };
  }

  /** Whether the tenant started this workflow (within the retention). */
  owns(workflowId: string): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM workflows WHERE workflow_id = ?", workflowId).toArray().length > 0;
  }

  usage(quotaInput: TenantQuota): TenantUsage {
    const quota = TenantQuotaSchema.parse(quotaInput);
    const { tokens } = refill(this.bucket(), quota, Date.now());
    return { running: this.running(), tokens: Math.floor(tokens * 100) / 100, quota };
  }

  private holds(workflowId: string): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM running WHERE workflow_id = ?", workflowId).toArray().length > 0;
  }

  private running(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM running").one().n;
  }

  private bucket(): Bucket | undefined {
    const row = this.ctx.storage.sql.exec<{ json: string }>("SELECT json FROM state WHERE key = 'bucket'").toArray()[0];
    return row === undefined ? undefined : parseJson(row.json, BucketSchema);
  }

  private saveBucket(b: Bucket): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO state (key, json) VALUES ('bucket', ?)", JSON.stringify(b));
  }
}
