/**
 * Registration tokens: an admin creates one for a pool (shown once, stored hashed), a GPU host uses it on
 * its one route to register its vLLM server and to re-register after a reboot, and it opens nothing else:
 * not another pool, not /admin, /v1 or /metrics; expired and revoked tokens are refused with the same 401.
 */
import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin, api } from "./helpers";
import { asKey, createRegistrationToken, createTenant, withAuth } from "./security-helpers";

const HOST = { id: "a100-0", url: "http://127.0.0.1:9", gpu: "A100", model: "llama-3.1-70b", maxConcurrency: 256, kvTokens: 400_000 };

function put(token: string | undefined, path: string, body: unknown): Promise<Response> {
  return withAuth(token === undefined ? undefined : `Bearer ${token}`, path, { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });
}

const registerAs = (token: string, body: unknown = HOST, pool = "default", id = HOST.id): Promise<Response> => put(token, `/register/pools/${pool}/instances/${id}`, body);

async function instances(pool = "default"): Promise<{ id: string; state: string; url: string; maxConcurrency: number; kvTokens: number }[]> {
  return ((await (await admin(`/pools/${pool}`, "GET")).json()) as { instances: { id: string; state: string; url: string; maxConcurrency: number; kvTokens: number }[] }).instances;
}

async function tokens(pool = "default"): Promise<{ id: string; prefix: string; active: boolean; lastInstanceId: string | null; revokedAtMs: number | null }[]> {
  const res = await admin(`/pools/${pool}/registration-tokens`, "GET");
  expect(res.status).toBe(200);
  return ((await res.json()) as { tokens: { id: string; prefix: string; active: boolean; lastInstanceId: string | null; revokedAtMs: number | null }[] }).tokens;
}

afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await reset();
});

describe("registration tokens", () => {
  it("are created once, listed by prefix only, and stored only as a hash", async () => {
    const { token, tokenInfo } = await createRegistrationToken("default", { label: "rack 3", ttlS: 3600 });
    expect(token).toMatch(/^hfr_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(token.startsWith(tokenInfo.prefix)).toBe(true);
    const listed = await tokens();
    expect(listed).toEqual([expect.objectContaining({ id: tokenInfo.id, prefix: tokenInfo.prefix, active: true, label: "rack 3" })]);
    expect(JSON.stringify(listed)).not.toContain(token.slice(tokenInfo.prefix.length));
    const rows = JSON.stringify((await env.TRACES.prepare("SELECT * FROM registration_tokens").all()).results);
    expect(rows).not.toContain(token.slice(tokenInfo.prefix.length + 1));
    expect(await tokens("other")).toEqual([]);
    expect((await admin("/pools/default/registration-tokens", "POST", { ttlS: 10 })).status).toBe(400);
    expect((await admin("/pools/default/registration-tokens", "POST", { ttlS: 3600, scope: "admin" })).status).toBe(400);
    expect(await tokens()).toHaveLength(1);
  });

  it("register a host, and re-register the same id idempotently after a reboot, keeping its state", async () => {
    const { token, tokenInfo } = await createRegistrationToken();
    const first = await registerAs(token);
    expect(first.status, await first.clone().text()).toBe(201);
    expect(await first.json()).toMatchObject({ id: "a100-0", gpu: "A100", state: "active", maxConcurrency: 256, kvTokens: 400_000 });
    const again = await registerAs(token);
    expect(again.status).toBe(200);
    expect(await instances()).toEqual([expect.objectContaining({ id: "a100-0", state: "active", maxConcurrency: 256 })]);

    // The operator drains it; the host reboots with a new URL and capacity: updated, still drained.
    expect((await admin("/pools/default/instances/a100-0/drain", "POST")).status).toBe(200);
    const rebooted = await registerAs(token, { ...HOST, url: "http://127.0.0.1:10", maxConcurrency: 64, kvTokens: 60_000 });
    expect(rebooted.status).toBe(200);
    expect(await instances()).toEqual([expect.objectContaining({ id: "a100-0", state: "draining", url: "http://127.0.0.1:10", maxConcurrency: 64, kvTokens: 60_000 })]);
    // The body's id may be left out (the path names it); a different one is refused.
    expect((await registerAs(token, { ...HOST, id: undefined, url: "http://127.0.0.1:11" })).status).toBe(200);
    expect((await registerAs(token, { ...HOST, id: "a100-1" })).status).toBe(400);
    expect(await tokens()).toEqual([expect.objectContaining({ id: tokenInfo.id, lastInstanceId: "a100-0" })]);
  });

  it("refuse another pool, expired and revoked tokens with one identical 401, and register nothing", async () => {
    const mine = await createRegistrationToken("default");
    const other = await createRegistrationToken("other");
    const short = await createRegistrationToken("default", { ttlS: 60 });
    const revoked = await createRegistrationToken("default");
    const del = await admin(`/pools/default/registration-tokens/${revoked.tokenInfo.id}`, "DELETE");
    expect(await del.json()).toEqual({ tokenInfo: expect.objectContaining({ id: revoked.tokenInfo.id, active: false }) });
    // Revoking through another pool's path finds nothing.
    expect((await admin(`/pools/other/registration-tokens/${mine.tokenInfo.id}`, "DELETE")).status).toBe(404);

    const realNow = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(realNow + 61_000);
    const refusals: Record<string, Response> = {
      "no token": await put(undefined, "/register/pools/default/instances/a100-0", HOST),
      "another pool's token": await registerAs(other.token),
      "this pool's token on another pool": await registerAs(mine.token, HOST, "other"),
      "an expired token": await registerAs(short.token),
      "a revoked token": await registerAs(revoked.token),
      "a wrong secret": await registerAs(`${mine.token.slice(0, -1)}${mine.token.endsWith("A") ? "B" : "A"}`),
      "the admin token": await withAuth("Bearer test-admin-token-0123456789", "/register/pools/default/instances/a100-0", { method: "PUT", body: JSON.stringify(HOST) }),
      "a tenant key": await asKey((await createTenant("host-tenant")).key, "/register/pools/default/instances/a100-0", { method: "PUT", body: JSON.stringify(HOST) }),
      "an invalid pool": await registerAs(mine.token, HOST, "BAD!"),
    };
    const bodies = new Set<string>();
    for (const [what, res] of Object.entries(refusals)) {
      expect(res.status, what).toBe(401);
      bodies.add(await res.text());
    }
    expect([...bodies].map((b) => JSON.parse(b))).toEqual([{ error: { code: "unauthorized", message: expect.any(String) } }]);
    expect(await instances()).toEqual([]);
    expect(await instances("other")).toEqual([]);
    // The same clock: the live token still works, so the refusals were the tokens' own.
    expect((await registerAs(mine.token)).status).toBe(201);
    expect((await tokens()).map((t) => [t.id, t.active])).toEqual(expect.arrayContaining([[short.tokenInfo.id, false], [revoked.tokenInfo.id, false], [mine.tokenInfo.id, true]]));
  });

  it("open nothing but their route: /admin, /v1 and /metrics refuse them", async () => {
    const { token } = await createRegistrationToken();
    const paths: [string, string][] = [
      ["GET", "/admin/pools/default"],
      ["POST", "/admin/pools/default/instances"],
      ["GET", "/admin/pools/default/registration-tokens"],
      ["POST", "/admin/pools/default/registration-tokens"],
      ["GET", "/admin/tenants"],
      ["GET", "/metrics"],
      ["GET", "/v1/databases"],
      ["POST", "/v1/workflows"],
      ["POST", "/register/pools/default/instances"],
    ];
    for (const [method, path] of paths) {
      const res = await withAuth(`Bearer ${token}`, path, { method, ...(method === "GET" ? {} : { body: JSON.stringify(HOST) }) });
      expect(res.status, `${method} ${path}`).toBeOneOf([401, 404]);
      if (!path.startsWith("/register")) expect(res.status, `${method} ${path}`).toBe(401);
      expect(await res.json()).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    }
    expect(await instances()).toEqual([]);
    expect(await tokens()).toHaveLength(1);
  });

  it("answer bad bodies 400 and register nothing", async () => {
    const { token } = await createRegistrationToken();
    const bad: Record<string, unknown> = {
      "not JSON": "{not json",
      "an array": "[]",
      "no url": { ...HOST, url: undefined },
      "a file url": { ...HOST, url: "file:///etc/passwd" },
      "an unknown GPU": { ...HOST, gpu: "B200" },
      "zero capacity": { ...HOST, maxConcurrency: 0 },
      "negative KV": { ...HOST, kvTokens: -1 },
      "an unknown field": { ...HOST, admin: true },
      "a bad id": { ...HOST, id: "A100_0" },
    };
    for (const [what, body] of Object.entries(bad)) {
      const id = what === "a bad id" ? "A100_0" : HOST.id;
      const res = await registerAs(token, body, "default", id);
      expect(res.status, what).toBe(400);
      expect(await res.json(), what).toEqual({ error: { code: "invalid_request", message: expect.any(String) } });
    }
    expect(await instances()).toEqual([]);
    expect((await tokens())[0]?.lastInstanceId).toBeNull();
  });

  it("never write a token to the console, D1 or an error message", async () => {
    const lines: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack ?? ""}` : String(a))).join(" ")));
    const { token, tokenInfo } = await createRegistrationToken();
    const other = await createRegistrationToken("other");
    const answers: string[] = [];
    const keep = async (res: Promise<Response>): Promise<void> => void answers.push(await (await res).text());
    await keep(registerAs(token));
    await keep(registerAs(token));
    await keep(registerAs(other.token));
    await keep(registerAs(token, { ...HOST, url: token }));
    await keep(registerAs(token, { ...HOST, model: token }));
    await keep(registerAs(token, HOST, "default", token));
    await keep(api(`/v1/workflows/${token}`, { headers: { authorization: `Bearer ${token}` } }));
    await keep(admin(`/pools/default/registration-tokens/${tokenInfo.id}`, "DELETE"));
    await keep(registerAs(token));
    await keep(admin("/pools/default/registration-tokens", "GET"));
    const tables = await env.TRACES.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'").all<{ name: string }>();
    const d1: string[] = [];
    for (const t of tables.results) d1.push(JSON.stringify((await env.TRACES.prepare(`SELECT * FROM "${t.name}"`).all()).results));
    const secrets = [token, other.token].flatMap((t) => [t, t.slice("hfr_".length + 13)]);
    const places = { console: lines.join("\n"), answers: answers.join("\n"), d1: d1.join("\n") };
    expect(Object.entries(places).filter(([, text]) => secrets.some((s) => text.includes(s))).map(([where]) => where)).toEqual([]);
    expect(places.d1).toContain(tokenInfo.prefix.slice("hfr_".length));
  });
});
