/**
 * The TenantObject's table of Idempotency-Keys (src/core/idempotency.ts decides; this persists). One table per
 * tenant, so two tenants' equal keys never meet. Every method runs inside one synchronous stretch of the
 * object, so a claim is atomic: of two racing requests with one key, exactly one gets it.
 */
import { decideClaim, IDEMPOTENCY_RETENTION_MS, IdempotencyStateSchema, type IdempotencyClaim, type IdempotencyRecord } from "../core/idempotency";

export const IDEMPOTENCY_MIGRATION = `CREATE TABLE idempotency (
     key TEXT PRIMARY KEY, body_sha256 TEXT NOT NULL, workflow_id TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('pending', 'started')), created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);
   CREATE INDEX idempotency_created ON idempotency (created_at_ms)`;

/** Expired rows deleted per claim: bounded work per request, and still faster than any tenant can add keys. */
const PRUNE_BATCH = 64;

interface Row extends Record<string, SqlStorageValue> {
  body_sha256: string;
  workflow_id: string;
  state: string;
  created_at_ms: number;
  updated_at_ms: number;
}

export class IdempotencyStore {
  constructor(private readonly sql: SqlStorage) {}

  claim(key: string, bodySha256: string, newWorkflowId: string, nowMs: number): IdempotencyClaim {
    this.sql.exec(
      "DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE created_at_ms <= ? ORDER BY created_at_ms LIMIT ?)",
      nowMs - IDEMPOTENCY_RETENTION_MS,
      PRUNE_BATCH,
    );
    const claim = decideClaim(this.record(key), bodySha256, newWorkflowId, nowMs);
    if (claim.kind === "fresh") {
      this.sql.exec(
        "INSERT OR REPLACE INTO idempotency (key, body_sha256, workflow_id, state, created_at_ms, updated_at_ms) VALUES (?, ?, ?, 'pending', ?, ?)",
        key, bodySha256, claim.workflowId, nowMs, nowMs,
      );
    } else if (claim.kind === "takeover") {
      // Restarts the stale clock, so a third request meanwhile waits instead of taking over too.
      this.sql.exec("UPDATE idempotency SET updated_at_ms = ? WHERE key = ?", nowMs, key);
    }
    return claim;
  }

  /** The key's workflow started: from now on the key replays it. */
  started(key: string, workflowId: string, nowMs: number): { updated: boolean } {
    const cursor = this.sql.exec("UPDATE idempotency SET state = 'started', updated_at_ms = ? WHERE key = ? AND workflow_id = ?", nowMs, key, workflowId);
    cursor.toArray();
    return { updated: cursor.rowsWritten > 0 };
  }

  /** The start was refused, so nothing exists under the key: free it. A started key is never freed. */
  release(key: string, workflowId: string): { released: boolean } {
    const cursor = this.sql.exec("DELETE FROM idempotency WHERE key = ? AND workflow_id = ? AND state = 'pending'", key, workflowId);
    cursor.toArray();
    return { released: cursor.rowsWritten > 0 };
  }

  private record(key: string): IdempotencyRecord | undefined {
    const row = this.sql.exec<Row>("SELECT body_sha256, workflow_id, state, created_at_ms, updated_at_ms FROM idempotency WHERE key = ?", key).toArray()[0];
    if (row === undefined) return undefined;
    return {
      bodySha256: row.body_sha256,
      workflowId: row.workflow_id,
      state: IdempotencyStateSchema.parse(row.state),
      createdAtMs: row.created_at_ms,
      updatedAtMs: row.updated_at_ms,
    };
  }
}
