/**
 * Registration tokens in D1 (migrations/0005_registration_tokens.sql): a GPU host's credential for one
 * route, registering itself in one pool. A token is `hfr_<prefix>_<secret>`, made and checked like a tenant
 * key (src/db/api-keys.ts): only its SHA-256 is stored, and it is compared in constant time.
 */
import { z } from "zod";
import { hashKey, randomHex, sameSecret } from "./api-keys";

const TOKEN_PATTERN = /^hfr_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

/** A token as lists show it: never the token, never its hash. */
export const RegistrationTokenSummarySchema = z.object({
  id: z.string(),
  pool: z.string(),
  prefix: z.string(),
  label: z.string().nullable(),
  createdAtMs: z.number(),
  expiresAtMs: z.number(),
  revokedAtMs: z.number().nullable(),
  lastUsedAtMs: z.number().nullable(),
  lastInstanceId: z.string().nullable(),
  /** False once revoked or expired. */
  active: z.boolean(),
});
export type RegistrationTokenSummary = z.infer<typeof RegistrationTokenSummarySchema>;

const RowSchema = z.object({
  id: z.string(),
  pool: z.string(),
  prefix: z.string(),
  label: z.string().nullable(),
  created_at_ms: z.number(),
  expires_at_ms: z.number(),
  revoked_at_ms: z.number().nullable(),
  last_used_at_ms: z.number().nullable(),
  last_instance_id: z.string().nullable(),
});
const COLUMNS = "id, pool, prefix, label, created_at_ms, expires_at_ms, revoked_at_ms, last_used_at_ms, last_instance_id";

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function toSummary(row: unknown, nowMs: number): RegistrationTokenSummary {
  const r = RowSchema.parse(row);
  return {
    id: r.id,
    pool: r.pool,
    prefix: `hfr_${r.prefix}`,
    label: r.label,
    createdAtMs: r.created_at_ms,
    expiresAtMs: r.expires_at_ms,
    revokedAtMs: r.revoked_at_ms,
    lastUsedAtMs: r.last_used_at_ms,
    lastInstanceId: r.last_instance_id,
    active: r.revoked_at_ms === null && r.expires_at_ms > nowMs,
  };
}

/** A new token for the pool: the only time the token itself exists outside the host. */
export async function createRegistrationToken(db: D1Database, pool: string, label: string | null, ttlMs: number, nowMs: number): Promise<{ token: string; summary: RegistrationTokenSummary }> {
  for (;;) {
    const prefix = randomHex(6);
    const token = `hfr_${prefix}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
    const id = `rt_${randomHex(8)}`;
    const r = await db
      .prepare("INSERT OR IGNORE INTO registration_tokens (id, pool, prefix, hash, label, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(id, pool, prefix, await hashKey(token), label, nowMs, nowMs + ttlMs)
      .run();
    // A clash of 48-bit prefixes is rare; a new draw is cheaper than a lookup first.
    if (r.meta.changes === 1) {
      const summary = { id, pool, prefix: `hfr_${prefix}`, label, createdAtMs: nowMs, expiresAtMs: nowMs + ttlMs, revokedAtMs: null, lastUsedAtMs: null, lastInstanceId: null, active: true };
      return { token, summary };
    }
  }
}

export async function listRegistrationTokens(db: D1Database, pool: string, nowMs: number): Promise<RegistrationTokenSummary[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM registration_tokens WHERE pool = ? ORDER BY created_at_ms, id`).bind(pool).all();
  return results.map((r) => toSummary(r, nowMs));
}

/** Revokes at once; a token revoked before keeps its first revocation time. Undefined when the pool has no such token. */
export async function revokeRegistrationToken(db: D1Database, pool: string, id: string, nowMs: number): Promise<RegistrationTokenSummary | undefined> {
  await db.prepare("UPDATE registration_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, ?) WHERE id = ? AND pool = ?").bind(nowMs, id, pool).run();
  const row = await db.prepare(`SELECT ${COLUMNS} FROM registration_tokens WHERE id = ? AND pool = ?`).bind(id, pool).first();
  return row === null ? undefined : toSummary(row, nowMs);
}

const AuthRowSchema = z.object({ id: z.string(), pool: z.string(), hash: z.string(), expires_at_ms: z.number(), revoked_at_ms: z.number().nullable() });

/**
 * The token's id when `token` is a live token of `pool`; undefined for anything else (malformed, unknown,
 * another pool's, expired, revoked), which callers answer alike.
 */
export async function authenticateRegistration(db: D1Database, token: string, pool: string, nowMs: number): Promise<string | undefined> {
  const prefix = TOKEN_PATTERN.exec(token)?.[1];
  if (prefix === undefined) return undefined;
  const row = await db.prepare("SELECT id, pool, hash, expires_at_ms, revoked_at_ms FROM registration_tokens WHERE prefix = ?").bind(prefix).first();
  if (row === null) return undefined;
  const r = AuthRowSchema.parse(row);
  // The hash is compared even for another pool's token, so the answer's timing does not tell the two apart.
  const matches = sameSecret(r.hash, await hashKey(token));
  if (!matches || r.pool !== pool || r.revoked_at_ms !== null || r.expires_at_ms <= nowMs) return undefined;
  return r.id;
}

export async function recordRegistration(db: D1Database, id: string, instanceId: string, nowMs: number): Promise<void> {
  await db.prepare("UPDATE registration_tokens SET last_used_at_ms = ?, last_instance_id = ? WHERE id = ?").bind(nowMs, instanceId, id).run();
}
