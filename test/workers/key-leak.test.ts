/**
 * API keys never leak: not to the console (every level, Worker and Durable Objects alike: they run in this
 * isolate), not in any response body but the one that issued the key, not in any D1 table or a workflow's
 * storage, and not in error messages. The run issues, uses, rotates and revokes keys, sends malformed and
 * key-like unknown ones, runs a workflow to its trace, and puts keys where they do not belong (a query
 * string, body fields, a path).
 */
import { env } from "cloudflare:workers";
import { reset, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { admin, fakeVllm, until } from "./helpers";
import { asKey, createTenant, issueKey, postJson, REPLAY, registerPool, secretOf, unknownKey, withAuth } from "./security-helpers";

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;

function render(value: unknown): string {
  if (value instanceof Error) return `${value.stack ?? ""} ${value.message} ${render(value.cause)}`;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Everything the Worker writes to the console while the test runs, at every level. */
function captureConsole(): string[] {
  const lines: string[] = [];
  for (const level of LEVELS) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(`${level}: ${args.map(render).join(" ")}`));
  return lines;
}

/** Every row of every D1 table (the schema included), as text. */
async function dumpD1(): Promise<string> {
  const tables = await env.TRACES.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'").all<{ name: string; sql: string }>();
  expect(tables.results.map((t) => t.name)).toEqual(expect.arrayContaining(["tenants", "api_keys", "workflow_traces", "call_traces"]));
  const parts: string[] = [];
  for (const t of tables.results) parts.push(t.sql, JSON.stringify((await env.TRACES.prepare(`SELECT * FROM "${t.name}"`).all()).results));
  return parts.join("\n");
}

/** A Durable Object's SQLite storage, every table, as text. */
async function dumpObject(stub: DurableObjectStub): Promise<string> {
  return runInDurableObject(stub, (_instance, state) => {
    const names = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'").toArray();
    return names.map(({ name }) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${name}"`).toArray())).join("\n");
  });
}

/** The places (by label) where any of the keys, or a key's 43-character secret alone, appears. */
function leaks(keys: readonly string[], places: Record<string, string>): string[] {
  const secrets = keys.flatMap((k) => [k, secretOf(k)]);
  return Object.entries(places).flatMap(([where, text]) => (secrets.some((s) => text.includes(s)) ? [where] : []));
}

beforeEach(registerPool);
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("API keys never leak", () => {
  it("finds a key wherever it is written: the detector and the console capture work", async () => {
    const lines = captureConsole();
    const key = unknownKey();
    // Written inside a Durable Object, as the objects' own logging would be.
    await runInDurableObject(env.TENANT.getByName("probe"), () => console.error(`probe ${secretOf(key)}`));
    expect(leaks([key], { console: lines.join("\n") })).toEqual(["console"]);
    expect(leaks([key], { elsewhere: key.slice(0, 16) })).toEqual([]);
  });

  it("handles keys as credentials (issue, use, rotate, revoke, refuse) without writing them anywhere", async () => {
    const lines = captureConsole();
    fakeVllm();
    const bodies: Record<string, string> = {};
    const record = async (label: string, res: Response, status: number): Promise<void> => {
      bodies[label] = await res.text();
      expect(res.status, `${label}: ${bodies[label]}`).toBe(status);
    };

    // The issuing responses are the one place a key may be: they are not recorded.
    const a = await createTenant("alpha");
    const second = await issueKey(a.tenant.id);
    const keys = [a.key, second.key];

    await record("valid key", await asKey(a.key, "/v1/databases"), 200);
    const run = await postJson(a.key, "/v1/workflows", REPLAY, { prefer: "wait=10" });
    const { id, status } = (await run.clone().json()) as { id: string; status: string };
    await record("workflow run", run, 200);
    expect(status).toBe("succeeded");
    await runDurableObjectAlarm(env.WORKFLOW.getByName(id));
    await until(async () => (await env.TRACES.prepare("SELECT 1 AS n FROM workflow_traces WHERE workflow_id = ?").bind(id).first<number>("n")) ?? undefined);
    await record("workflow view", await asKey(a.key, `/v1/workflows/${id}`), 200);

    await record("revocation", await admin(`/tenants/${a.tenant.id}/keys/${second.id}`, "DELETE"), 200);
    await record("revoked key", await asKey(second.key, "/v1/databases"), 401);
    const rotation = await admin(`/tenants/${a.tenant.id}/keys/${a.keyInfo.id}/rotate`, "POST", { graceS: 0 });
    expect(rotation.status).toBe(201);
    const rotated = (await rotation.json()) as { key: string; replaced: unknown };
    // The rotation shows its new key (once) and nothing of the old one.
    bodies["rotation, minus its new key"] = JSON.stringify({ ...rotated, key: undefined });
    keys.push(rotated.key);
    await record("rotated-out key", await asKey(a.key, "/v1/databases"), 401);
    await record("new key", await asKey(rotated.key, "/v1/databases"), 200);

    const unknown = unknownKey();
    keys.push(unknown);
    const refused: Record<string, string> = {
      "unknown well-formed key": `Bearer ${unknown}`,
      "key with a character more": `Bearer ${rotated.key}x`,
      "key in upper case": `Bearer ${rotated.key.toUpperCase()}`,
      "key under another scheme": `Token ${rotated.key}`,
      "key twice": `Bearer ${rotated.key},${rotated.key}`,
    };
    for (const [label, auth] of Object.entries(refused)) await record(label, await withAuth(auth, "/v1/databases"), 401);
    await record("tenant key on an admin route", await asKey(rotated.key, "/admin/tenants"), 401);
    await record("key in a query string, no header", await withAuth(undefined, `/v1/databases?api_key=${rotated.key}`), 401);
    await record("key in a query string, with a header", await asKey(rotated.key, `/v1/databases?api_key=${rotated.key}&key=${second.key}`), 200);
    await record("key list", await admin(`/tenants/${a.tenant.id}/keys`, "GET"), 200);
    await record("tenant view", await admin(`/tenants/${a.tenant.id}`, "GET"), 200);

    const places: Record<string, string> = {
      ...bodies,
      console: lines.join("\n"),
      d1: await dumpD1(),
      "workflow storage": await dumpObject(env.WORKFLOW.getByName(id)),
      "tenant quota storage": await dumpObject(env.TENANT.getByName(a.tenant.id)),
    };
    expect(leaks(keys, places)).toEqual([]);
    // The trace really is there, so the D1 dump covered it.
    expect(places.d1).toContain(id);
  }, 30_000);

  it("does not echo a key sent in a body field or a path back in an error message", async () => {
    const lines = captureConsole();
    const t = await createTenant("alpha");
    const stray = (await issueKey(t.tenant.id)).key;
    const bodies: Record<string, string> = {};
    const send = async (label: string, res: Promise<Response>): Promise<void> => {
      const r = await res;
      bodies[`${label} (${r.status})`] = await r.text();
      expect(r.status, label).toBeGreaterThanOrEqual(400);
    };
    await send("text2sql database and question", postJson(t.key, "/v1/workflows", { kind: "text2sql", database: stray, question: stray }));
    await send("replay pool", postJson(t.key, "/v1/workflows", { ...REPLAY, pool: stray }));
    await send("database name", postJson(t.key, "/v1/databases", { name: stray, target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE t (id INTEGER)" }));
    await send("database path", asKey(t.key, `/v1/databases/${stray}`));
    await send("workflow path", asKey(t.key, `/v1/workflows/${stray}`));
    await send("chat model", postJson(t.key, "/v1/chat/completions", { model: stray, messages: [{ role: "user", content: "hi" }] }));
    await send("chat pool header", postJson(t.key, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }, { "x-hexflow-pool": stray }));
    await send("tenant name", admin("/tenants", "POST", { name: stray }));
    await send("unrouted path", asKey(t.key, `/v1/${stray}`));
    expect(leaks([stray], { ...bodies, console: lines.join("\n") })).toEqual([]);
  });
});
