/**
 * Multi-tenancy at the gate: every route of the app (read from app.routes, so a new route is covered by
 * default) refuses a missing, malformed, unknown or revoked credential with one identical 401, admin routes
 * refuse tenant keys, and one tenant's workflows and databases answer another tenant exactly as missing ones.
 * Key lifecycle is in tenant-keys.test.ts, quotas and SLO classes in tenant-quotas.test.ts.
 */
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { newWorkflowId } from "../../src/api/workflow-ids";
import { ADMIN, admin, fakeVllm } from "./helpers";
import { appRoutes, asKey, concretePath, createRegistrationToken, createTenant, isAdminRoute, isPublicRoute, isRegistrationRoute, issueKey, postJson, REPLAY, registerPool, routeName, unknownKey, withAuth, type Route } from "./security-helpers";

const DDL = "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)";
const ADMIN_AUTH = ADMIN.authorization;

/** A body each write route would accept from the right caller, so a 401 cannot come from validation. */
const BODIES: Record<string, unknown> = {
  "POST /v1/workflows": REPLAY,
  "POST /v1/databases": { name: "intruder", target: { kind: "d1", binding: "DEMO_DB" }, ddl: DDL },
  "POST /v1/chat/completions": { messages: [{ role: "user", content: "hi" }] },
  "POST /v1/completions": { prompt: "hi" },
  "POST /admin/tenants": { name: "intruder" },
  "PATCH /admin/tenants/:tenant": { quota: { workflowsPerS: 1, burst: 1, maxConcurrent: 1 } },
  "POST /admin/tenants/:tenant/keys": {},
  "POST /admin/tenants/:tenant/keys/:key/rotate": { graceS: 0 },
  "POST /admin/pools/:pool/instances": { id: "intruder", url: "http://127.0.0.1:9009", gpu: "A100", timeScale: 20 },
  "PATCH /admin/pools/:pool/instances/:id": { maxConcurrency: 1 },
  "PUT /admin/pools/:pool/policy": { alpha: 0 },
  "POST /admin/pools/:pool/registration-tokens": {},
  "PUT /register/pools/:pool/instances/:id": { url: "http://127.0.0.1:9009", gpu: "A100", timeScale: 20 },
};

function request(route: Route): RequestInit {
  const body = BODIES[routeName(route)];
  return { method: route.method, ...(route.method === "GET" || route.method === "DELETE" ? {} : { body: JSON.stringify(body ?? {}), headers: { "content-type": "application/json" } }) };
}

async function registerDatabase(key: string, name: string, ddl = DDL): Promise<void> {
  expect((await postJson(key, "/v1/databases", { name, target: { kind: "d1", binding: "DEMO_DB" }, ddl })).status).toBe(201);
}

async function startWorkflow(key: string): Promise<string> {
  const res = await postJson(key, "/v1/workflows", REPLAY);
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

beforeEach(registerPool);
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("every route demands its credential", () => {
  it("lists the routes it checks, the public ones included", () => {
    const names = appRoutes().map(routeName);
    // Guards the derivation itself: an empty or middleware-only list would make the next test pass vacuously.
    expect(names).toEqual(expect.arrayContaining(["GET /health", "POST /v1/workflows", "GET /v1/workflows/:id", "DELETE /v1/databases/:name", "POST /v1/chat/completions", "POST /admin/tenants", "DELETE /admin/tenants/:tenant/keys/:key", "PUT /admin/pools/:pool/policy"]));
    expect(names.some((n) => n.startsWith("ALL "))).toBe(false);
  });

  it("answers a missing, malformed, unknown or revoked key (and a tenant key on /admin) with one identical 401, and changes nothing", async () => {
    fakeVllm();
    const a = await createTenant("alpha");
    const b = await createTenant("beta");
    const revoked = await issueKey(a.tenant.id);
    expect((await admin(`/tenants/${a.tenant.id}/keys/${revoked.id}`, "DELETE")).status).toBe(200);
    // Real ids in every path, so a refusal is the credential's doing and not a 404 for a made-up id.
    await registerDatabase(a.key, "sales");
    const workflowId = await startWorkflow(a.key);
    const params: Record<string, string> = { tenant: a.tenant.id, key: a.keyInfo.id, pool: "default", name: "sales" };
    const value = (param: string, path: string): string => (param === "id" ? (path.startsWith("/v1/workflows") ? workflowId : "a100-0") : (params[param] ?? "p1"));
    const lastChar = a.key.at(-1) === "A" ? "B" : "A";
    const refused: Record<string, string | undefined> = {
      "no Authorization header": undefined,
      "an empty Authorization header": "",
      "another scheme": `Basic ${btoa(`alpha:${a.key}`)}`,
      "Bearer and nothing": "Bearer ",
      "a malformed key": "Bearer not-a-key",
      "two keys": `Bearer ${a.key} ${a.key}`,
      "an unknown well-formed key": `Bearer ${unknownKey()}`,
      "a known prefix with a wrong secret": `Bearer ${a.key.slice(0, -1)}${lastChar}`,
      "a revoked key": `Bearer ${revoked.key}`,
    };
    const tenantRefused = { ...refused, "the admin token": ADMIN_AUTH };
    const adminRefused = { ...refused, "a tenant key": `Bearer ${a.key}`, "another tenant's key": `Bearer ${b.key}`, "the admin token as a prefix": `${ADMIN_AUTH}x` };
    // A registration token opens its one route in its own pool only; the other pool's token is refused like the rest.
    const otherPool = await createRegistrationToken("other");
    const registrationRefused = { ...refused, "the admin token": ADMIN_AUTH, "a tenant key": `Bearer ${a.key}`, "another pool's registration token": `Bearer ${otherPool.token}` };
    const reference: Record<"tenant" | "admin" | "registration", string | undefined> = { tenant: undefined, admin: undefined, registration: undefined };
    let checked = 0;
    for (const route of appRoutes()) {
      const path = concretePath(route.path, value);
      const name = routeName(route);
      if (isPublicRoute(route)) {
        const res = await withAuth(undefined, path, { method: route.method });
        expect(res.status, name).toBe(200);
        await res.json();
        continue;
      }
      const kind = isAdminRoute(route) ? "admin" : isRegistrationRoute(route) ? "registration" : "tenant";
      for (const [what, auth] of Object.entries(kind === "admin" ? adminRefused : kind === "registration" ? registrationRefused : tenantRefused)) {
        const res = await withAuth(auth, path, request(route));
        const text = await res.text();
        expect(res.status, `${name} with ${what}: ${text}`).toBe(401);
        // One body for every reason: the answer must not tell an unknown key from a revoked one.
        reference[kind] ??= text;
        expect(text, `${name} with ${what}`).toBe(reference[kind]);
        if (kind === "tenant") expect(res.headers.get("www-authenticate")).toBe('Bearer realm="hexflow"');
        checked++;
      }
      if (route.method === "GET" && kind !== "registration") {
        // The right credential passes the same gate, so the 401s above were about the credential.
        const res = await withAuth(kind === "admin" ? ADMIN_AUTH : `Bearer ${a.key}`, path);
        expect(res.status, name).not.toBe(401);
      }
    }
    expect(checked).toBeGreaterThan(20 * Object.keys(refused).length);
    expect(JSON.parse(reference.tenant ?? "null")).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });

    // Nothing the refused requests asked for happened.
    const tenants = (await (await admin("/tenants", "GET")).json()) as { tenants: { name: string }[] };
    expect(tenants.tenants.map((t) => t.name).sort()).toEqual(["alpha", "beta", "test"]);
    const keys = (await (await admin(`/tenants/${a.tenant.id}/keys`, "GET")).json()) as { keys: { id: string; active: boolean }[] };
    expect(keys.keys.map((k) => [k.id, k.active])).toEqual([[a.keyInfo.id, true], [revoked.id, false]]);
    expect((await asKey(a.key, `/v1/databases/sales`)).status).toBe(200);
    const wf = (await (await asKey(a.key, `/v1/workflows/${workflowId}`)).json()) as { status: string };
    expect(wf.status).not.toBe("cancelled");
    const pool = (await (await admin("/pools/default", "GET")).json()) as { alpha: number; instances: { id: string; state: string }[] };
    expect(pool.instances.map((i) => [i.id, i.state])).toEqual([["a100-0", "active"]]);
    expect(pool.alpha).not.toBe(0);
    expect(((await (await asKey(a.key, "/v1/databases")).json()) as { databases: { name: string }[] }).databases.map((d) => d.name)).toEqual(["sales"]);
  }, 60_000);
});

describe("tenant isolation", () => {
  it("answers another tenant's workflow or database with 404, byte for byte as a missing one", async () => {
    fakeVllm();
    const a = await createTenant("alpha");
    const b = await createTenant("beta");
    // B's view of "sales" while no tenant has one: what "missing" looks like for that name.
    const missingDb: Record<string, string> = {};
    for (const method of ["GET", "DELETE"]) missingDb[method] = await (await asKey(b.key, "/v1/databases/sales", { method })).text();
    await registerDatabase(a.key, "sales");
    const workflowId = await startWorkflow(a.key);
    for (const method of ["GET", "DELETE"]) {
      const other = await asKey(b.key, `/v1/workflows/${workflowId}`, { method });
      const missing = await asKey(b.key, `/v1/workflows/${newWorkflowId()}`, { method });
      expect(other.status, method).toBe(404);
      expect(await other.text(), method).toBe(await missing.text());
      const db = await asKey(b.key, "/v1/databases/sales", { method });
      expect(db.status, method).toBe(404);
      expect(await db.text(), method).toBe(missingDb[method]);
    }
    // B's DELETEs touched nothing of A's.
    expect((await asKey(a.key, "/v1/databases/sales")).status).toBe(200);
    const wf = (await (await asKey(a.key, `/v1/workflows/${workflowId}`)).json()) as { status: string };
    expect(wf.status).not.toBe("cancelled");
  });

  it("keeps each tenant's database catalog apart: same name, own schema, own lifetime", async () => {
    const a = await createTenant("alpha");
    const b = await createTenant("beta");
    await registerDatabase(a.key, "sales");
    expect(await (await asKey(b.key, "/v1/databases")).json()).toEqual({ databases: [] });
    await registerDatabase(b.key, "sales", "CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
    const tables = async (key: string) => ((await (await asKey(key, "/v1/databases/sales")).json()) as { tables: { name: string }[] }).tables.map((t) => t.name);
    expect(await tables(a.key)).toEqual(["orders"]);
    expect(await tables(b.key)).toEqual(["invoices"]);
    expect((await asKey(a.key, "/v1/databases/sales", { method: "DELETE" })).status).toBe(200);
    expect((await asKey(a.key, "/v1/databases/sales")).status).toBe(404);
    expect(await tables(b.key)).toEqual(["invoices"]);
  });

  it("runs a text2sql request only over the asking tenant's databases", async () => {
    const a = await createTenant("alpha");
    const b = await createTenant("beta");
    await registerDatabase(a.key, "sales");
    const res = await postJson(b.key, "/v1/workflows", { kind: "text2sql", database: "sales", question: "how many orders?" });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });
});
