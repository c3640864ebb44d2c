/**
 * API key lifecycle through the admin API: a key is shown once and stored only as a SHA-256 with a lookup
 * prefix, lists show prefix / created / last used, revocation and rotation take effect on the next request,
 * and a rotation's grace keeps both keys working until it passes. Keys belong to their tenant.
 */
import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hashKey } from "../../src/db/api-keys";
import type { KeySummary } from "../../src/db/tenants";
import { admin, api, until } from "./helpers";
import { asKey, createTenant, issueKey, secretOf } from "./security-helpers";

const KEY = /^hfk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

type KeyView = KeySummary;

async function keysOf(tenantId: string): Promise<KeyView[]> {
  const res = await admin(`/tenants/${tenantId}/keys`, "GET");
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: KeyView[] }).keys;
}

/** 200 while the key opens the tenant's routes, 401 once it does not. */
const statusWith = async (key: string): Promise<number> => (await asKey(key, "/v1/databases")).status;

async function rotate(tenantId: string, keyId: string, body: unknown): Promise<Response> {
  return admin(`/tenants/${tenantId}/keys/${keyId}/rotate`, "POST", body);
}

afterEach(async () => {
  vi.useRealTimers();
  await reset();
});

describe("API keys", () => {
  it("shows a new key once, lists it by prefix with its use, and stores only its hash", async () => {
    const before = Date.now();
    const a = await createTenant("alpha");
    expect(a.key).toMatch(KEY);
    expect(a.keyInfo.prefix).toBe(a.key.slice(0, 16));
    const [listed] = await keysOf(a.tenant.id);
    expect(listed).toMatchObject({ id: a.keyInfo.id, prefix: a.key.slice(0, 16), lastUsedAtMs: null, active: true });
    expect(listed?.createdAtMs).toBeGreaterThanOrEqual(before);

    expect(await statusWith(a.key)).toBe(200);
    // `last used` is written after the answer (waitUntil), so it may land a moment later.
    const used = await until(async () => (await keysOf(a.tenant.id))[0]?.lastUsedAtMs ?? undefined);
    expect(used).toBeGreaterThanOrEqual(listed?.createdAtMs ?? Infinity);

    // No admin view repeats the key, its secret or its hash.
    const hash = await hashKey(a.key);
    const views: [string, string][] = [[`/tenants/${a.tenant.id}/keys`, a.keyInfo.id], [`/tenants/${a.tenant.id}`, a.keyInfo.id], ["/tenants", a.tenant.id]];
    for (const [path, shown] of views) {
      const text = await (await admin(path, "GET")).text();
      expect(text, path).toContain(shown);
      for (const secret of [a.key, secretOf(a.key), hash]) expect(text, path).not.toContain(secret);
    }

    // The row: the prefix to find it by and a 64-hex SHA-256, never the key.
    const row = await env.TRACES.prepare("SELECT * FROM api_keys WHERE id = ?").bind(a.keyInfo.id).first<Record<string, unknown>>();
    expect(row).toMatchObject({ tenant_id: a.tenant.id, prefix: a.key.slice(4, 16), hash });
    expect(String(row?.hash)).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(secretOf(a.key));
  });

  it("issues further keys that work alongside the first, each with its own prefix", async () => {
    const a = await createTenant("alpha");
    const second = await issueKey(a.tenant.id);
    expect(second.key).toMatch(KEY);
    expect(second.key).not.toBe(a.key);
    expect([await statusWith(a.key), await statusWith(second.key)]).toEqual([200, 200]);
    expect((await keysOf(a.tenant.id)).map((k) => k.prefix)).toEqual([a.key.slice(0, 16), second.key.slice(0, 16)]);
  });

  it("revokes a key for the very next request, and only that key", async () => {
    const a = await createTenant("alpha");
    const second = await issueKey(a.tenant.id);
    expect(await statusWith(second.key)).toBe(200);
    const res = await admin(`/tenants/${a.tenant.id}/keys/${second.id}`, "DELETE");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ keyInfo: { id: second.id, active: false } });
    expect(await statusWith(second.key)).toBe(401);
    expect(await statusWith(a.key)).toBe(200);
    expect((await keysOf(a.tenant.id)).map((k) => [k.id, k.active])).toEqual([[a.keyInfo.id, true], [second.id, false]]);
    // A revoked key cannot be rotated back to life.
    expect((await rotate(a.tenant.id, second.id, {})).status).toBe(409);
  });

  it("rotates with graceS 0: the old key fails at once, the new one works", async () => {
    const a = await createTenant("alpha");
    const res = await rotate(a.tenant.id, a.keyInfo.id, { graceS: 0 });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { key: string; keyInfo: KeyView; replaced: KeyView };
    expect(body.key).toMatch(KEY);
    expect(body.replaced).toMatchObject({ id: a.keyInfo.id, replacedBy: body.keyInfo.id, active: false });
    expect(await statusWith(a.key)).toBe(401);
    expect(await statusWith(body.key)).toBe(200);
  });

  it("rotates with a grace: both keys work until it passes, then only the new one", async () => {
    const a = await createTenant("alpha");
    const res = await rotate(a.tenant.id, a.keyInfo.id, { graceS: 60 });
    expect(res.status).toBe(201);
    const { key, replaced } = (await res.json()) as { key: string; replaced: KeyView };
    expect(replaced.active).toBe(true);
    expect([await statusWith(a.key), await statusWith(key)]).toEqual([200, 200]);
    // The Worker runs in this isolate, so a faked Date moves its clock too: 59 s later the old key still works...
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 59_000 });
    expect([await statusWith(a.key), await statusWith(key)]).toEqual([200, 200]);
    // ...and a little past the grace it does not.
    vi.setSystemTime(Date.now() + 2_000);
    expect([await statusWith(a.key), await statusWith(key)]).toEqual([401, 200]);
    expect((await keysOf(a.tenant.id)).map((k) => k.active)).toEqual([false, true]);
  });

  it("keeps keys within their tenant: another tenant's path cannot rotate or revoke them", async () => {
    const a = await createTenant("alpha");
    const b = await createTenant("beta");
    expect((await rotate(a.tenant.id, b.keyInfo.id, {})).status).toBe(404);
    expect((await admin(`/tenants/${a.tenant.id}/keys/${b.keyInfo.id}`, "DELETE")).status).toBe(404);
    expect(await statusWith(b.key)).toBe(200);
    expect((await keysOf(a.tenant.id)).map((k) => k.id)).toEqual([a.keyInfo.id]);
    expect((await keysOf(b.tenant.id)).map((k) => k.active)).toEqual([true]);
  });

  it("refuses malformed admin requests about keys without changing any", async () => {
    const a = await createTenant("alpha");
    for (const graceS of [-1, 1.5, "10", 7 * 86_400 + 1, 1e308]) expect((await rotate(a.tenant.id, a.keyInfo.id, { graceS })).status, String(graceS)).toBe(400);
    expect((await rotate(a.tenant.id, "key_nope", {})).status).toBe(404);
    expect((await admin(`/tenants/tn_0000000000000000/keys`, "POST", {})).status).toBe(404);
    expect((await admin(`/tenants/${a.tenant.id}/keys`, "POST", { label: 7 })).status).toBe(400);
    expect((await keysOf(a.tenant.id)).map((k) => [k.id, k.active])).toEqual([[a.keyInfo.id, true]]);
    expect(await statusWith(a.key)).toBe(200);
  });

  it("answers 503 with Retry-After, not a 500, when the tenants database does not answer, and lets the key in once it does", async () => {
    const a = await createTenant("alpha");
    const prepare = vi.spyOn(env.TRACES, "prepare").mockImplementation(() => {
      throw new Error("D1_ERROR: database is locked: SQLITE_BUSY");
    });
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await api("/v1/databases", { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    expect(prepare).toHaveBeenCalledTimes(2);
    prepare.mockRestore();
    error.mockRestore();
    expect(await statusWith(a.key)).toBe(200);
  });
});
