/**
 * Tenants and API keys in D1 (migrations/0003_tenants.sql). Authentication reads D1 on every request,
 * with no cache: a revoked key stops working at the next request, in every isolate.
 */
import { z } from "zod";
import { TenantConfigSchema, TenantIdSchema, type TenantConfig } from "../core/tenant";
import { hashKey, keyPrefix, newApiKey, randomHex, sameSecret } from "./api-keys";

/** A tenant as the admin API answers it (and the OpenAPI document describes it). */
export const TenantSchema = z.object({ id: TenantIdSchema, name: z.string(), config: TenantConfigSchema, createdAtMs: z.number() });
export type Tenant = z.infer<typeof TenantSchema>;

/** A key as lists show it: never the key, never its hash. */
export const KeySummarySchema = z.object({
  id: z.string(),
  prefix: z.string(),
  label: z.string().nullable(),
  createdAtMs: z.number(),
  lastUsedAtMs: z.number().nullable(),
  expiresAtMs: z.number().nullable(),
  replacedBy: z.string().nullable(),
  /** False once revoked, or once a rotation's grace period has passed. */
  active: z.boolean(),
});
export type KeySummary = z.infer<typeof KeySummarySchema>;

const TenantRowSchema = z.object({ id: z.string(), name: z.string(), config: z.string(), created_at_ms: z.number() });
const KeyRowSchema = z.object({
  id: z.string(),
  prefix: z.string(),
  label: z.string().nullable(),
  created_at_ms: z.number(),
  last_used_at_ms: z.number().nullable(),
  expires_at_ms: z.number().nullable(),
  replaced_by: z.string().nullable(),
});

/** How stale `last used` may be: one write a minute per key rather than one per request. */
const TOUCH_EVERY_MS = 60_000;

function toTenant(row: unknown): Tenant {
  const r = TenantRowSchema.parse(row);
  return { id: r.id, name: r.name, config: TenantConfigSchema.parse(JSON.parse(r.config)), createdAtMs: r.created_at_ms };
}

function toKey(row: unknown, nowMs: number): KeySummary {
  const r = KeyRowSchema.parse(row);
  return {
    id: r.id,
    prefix: `hfk_${r.prefix}`,
    label: r.label,
    createdAtMs: r.created_at_ms,
    lastUsedAtMs: r.last_used_at_ms,
    expiresAtMs: r.expires_at_ms,
    replacedBy: r.replaced_by,
    active: r.expires_at_ms === null || r.expires_at_ms > nowMs,
  };
}

export async function createTenant(db: D1Database, name: string, config: TenantConfig, nowMs: number): Promise<Tenant | "exists"> {
  const id = `tn_${randomHex(8)}`;
  const r = await db.prepare("INSERT OR IGNORE INTO tenants (id, name, config, created_at_ms) VALUES (?, ?, ?, ?)").bind(id, name, JSON.stringify(config), nowMs).run();
  return r.meta.changes === 1 ? { id, name, config, createdAtMs: nowMs } : "exists";
}

export async function getTenant(db: D1Database, id: string): Promise<Tenant | undefined> {
  const row = await db.prepare("SELECT id, name, config, created_at_ms FROM tenants WHERE id = ?").bind(id).first();
  return row === null ? undefined : toTenant(row);
}

export async function listTenants(db: D1Database): Promise<Tenant[]> {
  const { results } = await db.prepare("SELECT id, name, config, created_at_ms FROM tenants ORDER BY created_at_ms, id").all();
  return results.map(toTenant);
}

export async function updateTenantConfig(db: D1Database, id: string, config: TenantConfig): Promise<boolean> {
  const r = await db.prepare("UPDATE tenants SET config = ? WHERE id = ?").bind(JSON.stringify(config), id).run();
  return r.meta.changes === 1;
}

/** A new key for the tenant: the only time the key itself exists outside the client. */
export async function issueKey(db: D1Database, tenantId: string, label: string | null, nowMs: number): Promise<{ key: string; summary: KeySummary }> {
  for (;;) {
    const { key, prefix } = newApiKey();
    const id = `key_${randomHex(8)}`;
    const r = await db
      .prepare("INSERT OR IGNORE INTO api_keys (id, tenant_id, prefix, hash, label, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(id, tenantId, prefix, await hashKey(key), label, nowMs)
      .run();
    // A clash of 48-bit prefixes is rare; a new draw is cheaper than a lookup first.
    if (r.meta.changes === 1) {
      return { key, summary: { id, prefix: `hfk_${prefix}`, label, createdAtMs: nowMs, lastUsedAtMs: null, expiresAtMs: null, replacedBy: null, active: true } };
    }
  }
}

export async function listKeys(db: D1Database, tenantId: string, nowMs: number): Promise<KeySummary[]> {
  const { results } = await db
    .prepare("SELECT id, prefix, label, created_at_ms, last_used_at_ms, expires_at_ms, replaced_by FROM api_keys WHERE tenant_id = ? ORDER BY created_at_ms, id")
    .bind(tenantId)
    .all();
  return results.map((r) => toKey(r, nowMs));
}

/**
 * Ends the key at `atMs` (now for a revocation, later for a rotation's grace); a key already ended earlier
 * keeps its earlier end. The summary says whether the key still works at `nowMs`.
 */
export async function expireKey(db: D1Database, tenantId: string, keyId: string, atMs: number, nowMs: number, replacedBy: string | null = null): Promise<KeySummary | undefined> {
  await db
    .prepare("UPDATE api_keys SET expires_at_ms = MIN(COALESCE(expires_at_ms, ?1), ?1), replaced_by = COALESCE(?2, replaced_by) WHERE id = ?3 AND tenant_id = ?4")
    .bind(atMs, replacedBy, keyId, tenantId)
    .run();
  const row = await db.prepare("SELECT id, prefix, label, created_at_ms, last_used_at_ms, expires_at_ms, replaced_by FROM api_keys WHERE id = ? AND tenant_id = ?").bind(keyId, tenantId).first();
  return row === null ? undefined : toKey(row, nowMs);
}

const AuthRowSchema = z.object({ key_id: z.string(), hash: z.string(), expires_at_ms: z.number().nullable(), last_used_at_ms: z.number().nullable() });

/**
 * The tenant a key belongs to, or undefined for a malformed, unknown, revoked or expired key (callers
 * answer all of them alike). `touch` is set when `last used` is due a write (see touchKey).
 */
export async function authenticate(db: D1Database, key: string, nowMs: number): Promise<{ tenant: Tenant; keyId: string; touch: boolean } | undefined> {
  const prefix = keyPrefix(key);
  if (prefix === undefined) return undefined;
  const row = await db
    .prepare("SELECT k.id AS key_id, k.hash, k.expires_at_ms, k.last_used_at_ms, t.id, t.name, t.config, t.created_at_ms FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.prefix = ?")
    .bind(prefix)
    .first();
  if (row === null) return undefined;
  const auth = AuthRowSchema.parse(row);
  if (!sameSecret(auth.hash, await hashKey(key))) return undefined;
  if (auth.expires_at_ms !== null && auth.expires_at_ms <= nowMs) return undefined;
  return { tenant: toTenant(row), keyId: auth.key_id, touch: auth.last_used_at_ms === null || nowMs - auth.last_used_at_ms >= TOUCH_EVERY_MS };
}

export async function touchKey(db: D1Database, keyId: string, nowMs: number): Promise<void> {
  await db.prepare("UPDATE api_keys SET last_used_at_ms = ? WHERE id = ?").bind(nowMs, keyId).run();
}
