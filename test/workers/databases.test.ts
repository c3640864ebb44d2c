import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { DatabaseRecord } from "../../src/core/database";
import { d1Binding, executeSql, readSchema } from "../../src/db/execute";
import type { DatabaseCatalogObject } from "../../src/objects/database-catalog";
import { api } from "./helpers";

const TOKEN = "connector-secret-token-0123456789";
const JSON_HEADERS = { "content-type": "application/json" };

function post(body: unknown): Promise<Response> {
  return api("/v1/databases", { method: "POST", headers: JSON_HEADERS, body: typeof body === "string" ? body : JSON.stringify(body) });
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, ...body.error };
}

interface Detail {
  name: string;
  target: Record<string, unknown>;
  dialect: string;
  tableCount: number;
  tables: { name: string; columns: { name: string; type: string; primaryKey: boolean; nullable: boolean; references?: { table: string; column: string } }[] }[];
}

beforeAll(async () => {
  await env.DEMO_DB.batch([
    env.DEMO_DB.prepare("CREATE TABLE shops (id INTEGER PRIMARY KEY, name TEXT NOT NULL, logo BLOB)"),
    env.DEMO_DB.prepare("CREATE TABLE items (id INTEGER PRIMARY KEY, shop_id INTEGER NOT NULL REFERENCES shops, label TEXT, price REAL)"),
    env.DEMO_DB.prepare("CREATE TABLE item_tags (item_id INTEGER REFERENCES items(id), tag TEXT, PRIMARY KEY (item_id, tag))"),
    env.DEMO_DB.prepare("INSERT INTO shops VALUES (1, 'north', x'cafe'), (2, 'south', NULL)"),
    env.DEMO_DB.prepare(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) INSERT INTO items SELECT i, 1 + i % 2, 'item ' || i, i * 1.5 FROM n",
    ),
  ]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("registering databases", () => {
  it("takes the schema from DDL", async () => {
    const res = await post({ name: "shop-ddl", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE a (id INTEGER PRIMARY KEY, b_id INT REFERENCES b(id)); CREATE TABLE b (id INT NOT NULL);" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Detail;
    expect(body).toMatchObject({ name: "shop-ddl", target: { kind: "d1", binding: "DEMO_DB" }, dialect: "sqlite", tableCount: 2 });
    expect(body.tables[0]?.columns[1]).toEqual({ name: "b_id", type: "INT", primaryKey: false, nullable: true, references: { table: "b", column: "id" } });
  });

  it("reads the schema of a D1 database, keys included", async () => {
    const res = await post({ name: "shop", target: { kind: "d1", binding: "DEMO_DB" } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Detail;
    expect(body.tables.map((t) => t.name)).toEqual(["item_tags", "items", "shops"]);
    const items = body.tables.find((t) => t.name === "items");
    expect(items?.columns[0]).toEqual({ name: "id", type: "INTEGER", primaryKey: true, nullable: false });
    // REFERENCES shops without a column means the parent's primary key.
    expect(items?.columns[1]).toEqual({ name: "shop_id", type: "INTEGER", primaryKey: false, nullable: false, references: { table: "shops", column: "id" } });
    const tags = body.tables.find((t) => t.name === "item_tags");
    expect(tags?.columns.map((c) => [c.name, c.primaryKey, c.references?.table])).toEqual([["item_id", true, "items"], ["tag", true, undefined]]);

    const one = await api("/v1/databases/shop");
    expect(one.status).toBe(200);
    expect(((await one.json()) as Detail).tables).toEqual(body.tables);
  });

  it("lists, refuses duplicates, deletes", async () => {
    expect((await post({ name: "dup", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE x (y INT)" })).status).toBe(201);
    const again = await post({ name: "dup", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE z (y INT)" });
    expect(await errorOf(again)).toMatchObject({ status: 409, code: "conflict" });

    const list = (await (await api("/v1/databases")).json()) as { databases: { name: string; tableCount: number }[] };
    expect(list.databases.find((d) => d.name === "dup")).toMatchObject({ tableCount: 1 });

    const deleted = await api("/v1/databases/dup", { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ name: "dup", deleted: true });
    expect(await errorOf(await api("/v1/databases/dup"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await errorOf(await api("/v1/databases/dup", { method: "DELETE" }))).toMatchObject({ status: 404, code: "not_found" });
    expect(await errorOf(await api("/v1/databases/Not%20A%20Name"))).toMatchObject({ status: 404 });
    // Deleted, the name is free again.
    expect((await post({ name: "dup", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE z (y INT)" })).status).toBe(201);
  });

  it("refuses bad input with a 400 and stores nothing", async () => {
    const before = (await (await api("/v1/databases")).json()) as unknown;
    const cases: [unknown, string, RegExp][] = [
      ["{not json", "invalid_request", /JSON/],
      [{ name: "Bad Name", target: { kind: "d1", binding: "DEMO_DB" } }, "invalid_request", /^name: a database name/],
      [{ name: "x", target: { kind: "mysql", binding: "DEMO_DB" } }, "invalid_request", /^target/],
      [{ name: "x", target: { kind: "d1", binding: "demo_db" } }, "invalid_request", /^target\.binding/],
      [{ name: "x", target: { kind: "d1", binding: "NO_SUCH_DB" } }, "invalid_request", /no D1 binding NO_SUCH_DB/],
      [{ name: "x", target: { kind: "d1", binding: "CATALOG" } }, "invalid_request", /no D1 binding CATALOG/],
      [{ name: "x", target: { kind: "connector", url: "ftp://db.example", token: TOKEN } }, "invalid_request", /^target\.url/],
      [{ name: "x", target: { kind: "connector", url: "https://db.example", token: "short" } }, "invalid_request", /^target\.token/],
      [{ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE t (" }, "invalid_ddl", /cannot be read/],
      [{ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "SELECT 1" }, "invalid_ddl", /no CREATE TABLE/],
      [{ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "x".repeat(256 * 1024 + 1) }, "schema_too_large", /256/],
      [{ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, dialect: "postgres" }, "invalid_request", /sqlite/],
      [{ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, extra: 1 }, "invalid_request", /extra/],
    ];
    for (const [body, code, message] of cases) {
      const e = await errorOf(await post(body));
      expect({ body, status: e.status, code: e.code }).toEqual({ body, status: 400, code });
      expect(e.message).toMatch(message);
    }
    const tables = Array.from({ length: 501 }, (_, i) => `CREATE TABLE t${i} (a INT);`).join("\n");
    expect(await errorOf(await post({ name: "x", target: { kind: "d1", binding: "DEMO_DB" }, ddl: tables }))).toMatchObject({ status: 400, code: "schema_too_large" });
    expect(await (await api("/v1/databases")).json()).toEqual(before);
  });

  it("never shows a connector's token", async () => {
    const schema = { dialect: "postgres", tables: [{ name: "t", columns: [{ name: "a", type: "integer", primaryKey: true, nullable: false }] }] };
    const seen: { url: string; auth: string | null }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      seen.push({ url: String(input), auth: new Headers(init?.headers).get("authorization") });
      return Response.json(schema);
    });
    const texts: string[] = [];
    const read = await post({ name: "onprem", target: { kind: "connector", url: "https://db.example/", token: TOKEN } });
    expect(read.status).toBe(201);
    texts.push(await read.text());
    expect(seen).toEqual([{ url: "https://db.example/v1/schema", auth: `Bearer ${TOKEN}` }]);
    const fromDdl = await post({ name: "onprem-ddl", target: { kind: "connector", url: "https://db.example", token: TOKEN }, ddl: "CREATE TABLE t (a int)", dialect: "postgres" });
    expect(fromDdl.status).toBe(201);
    expect(seen).toHaveLength(1);
    texts.push(await fromDdl.text());
    texts.push(await (await api("/v1/databases")).text(), await (await api("/v1/databases/onprem")).text());
    texts.push(await (await post({ name: "onprem", target: { kind: "connector", url: "https://db.example", token: TOKEN } })).text());
    for (const text of texts) expect(text).not.toContain(TOKEN);
    expect(JSON.parse(texts[0] ?? "{}")).toMatchObject({ target: { kind: "connector", url: "https://db.example/" }, dialect: "postgres" });
    expect(JSON.parse(texts[1] ?? "{}")).toMatchObject({ dialect: "postgres" });
  });

  it("answers 502 when the database cannot be reached", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      throw new TypeError("connection refused");
    });
    const e = await errorOf(await post({ name: "down", target: { kind: "connector", url: "https://db.example", token: TOKEN } }));
    expect(e).toMatchObject({ status: 502, code: "database_unavailable" });
    expect(e.message).toMatch(/cannot be reached: connection refused/);
    expect(await errorOf(await api("/v1/databases/down"))).toMatchObject({ status: 404 });
  });
});

describe("executeSql on D1", () => {
  const d1 = { kind: "d1", binding: "DEMO_DB" } as const;
  const run = (sql: string, maxRows = 10, timeoutMs = 5_000) => executeSql(env, d1, "sqlite", sql, { maxRows, timeoutMs });

  it("caps rows and says so, keeping column order", async () => {
    const r = await run("SELECT label, id FROM items ORDER BY id DESC", 5);
    expect(r).toMatchObject({ ok: true, value: { columns: ["label", "id"], truncated: true } });
    if (r.ok) expect(r.value.rows).toEqual([["item 50", 50], ["item 49", 49], ["item 48", 48], ["item 47", 47], ["item 46", 46]]);
    const all = await run("SELECT count(*) AS n FROM items;", 1);
    expect(all).toMatchObject({ ok: true, value: { columns: ["n"], rows: [[50]], truncated: false } });
  });

  it("runs WITH and VALUES, keeps duplicate column names, writes BLOBs as hex", async () => {
    const w = await run("WITH cheap AS (SELECT id FROM items WHERE price < 3) SELECT count(*) AS c FROM cheap -- trailing comment");
    expect(w).toMatchObject({ ok: true, value: { columns: ["c"], rows: [[1]] } });
    expect(await run("VALUES (1, 'a'), (2, 'b')")).toMatchObject({ ok: true, value: { rows: [[1, "a"], [2, "b"]] } });
    const j = await run("SELECT s.id, i.id, s.logo FROM shops s JOIN items i ON i.shop_id = s.id WHERE i.id = 2");
    expect(j).toMatchObject({ ok: true, value: { columns: ["id", "id", "logo"], rows: [[1, 2, "\\xcafe"]] } });
    expect(await run("SELECT logo FROM shops WHERE id = 2")).toMatchObject({ ok: true, value: { rows: [[null]] } });
  });

  it("returns SQLite's message for bad SQL", async () => {
    expect(await run("SELECT nope FROM items")).toEqual({ ok: false, error: { code: "sql_error", message: expect.stringMatching(/^no such column: nope/) } });
    const missing = await run("SELECT * FROM missing_table");
    expect(missing).toMatchObject({ ok: false, error: { code: "sql_error", message: expect.stringMatching(/^no such table: missing_table/) } });
    expect(await run("SELECT (1")).toMatchObject({ ok: false, error: { code: "sql_error" } });
    expect(await run("SELECT 1) UNION SELECT (2")).toMatchObject({ ok: false, error: { code: "sql_error", message: "unbalanced parentheses" } });
  });

  it("refuses anything but one read, and changes nothing", async () => {
    const refused: [string, string][] = [
      ["INSERT INTO items VALUES (99, 1, 'x', 1)", "not_read_only"],
      ["UPDATE items SET price = 0", "not_read_only"],
      ["DELETE FROM items", "not_read_only"],
      ["ATTACH DATABASE 'x.db' AS x", "not_read_only"],
      ["PRAGMA foreign_keys = OFF", "not_read_only"],
      ["DROP TABLE items", "not_read_only"],
      ["SELECT 1; DELETE FROM items", "multiple_statements"],
      ["WITH d AS (DELETE FROM items RETURNING id) SELECT * FROM d", "not_read_only"],
      ["  -- nothing\n", "empty_statement"],
    ];
    for (const [sql, code] of refused) expect(await run(sql)).toMatchObject({ ok: false, error: { code } });
    const count = await env.DEMO_DB.prepare("SELECT count(*) AS n, sum(price) AS total FROM items").first();
    expect(count).toEqual({ n: 50, total: 1912.5 });
  });

  it("reports a missing binding as database_unavailable", async () => {
    expect(await executeSql(env, { kind: "d1", binding: "NOPE" }, "sqlite", "SELECT 1", { maxRows: 1, timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: "database_unavailable" } });
    expect(await readSchema(env, { kind: "d1", binding: "WORKFLOW" })).toMatchObject({ ok: false, error: { code: "database_unavailable" } });
    // A real D1 binding that QUERYABLE_D1 does not list stays closed.
    const closed = { DEMO_DB: env.DEMO_DB, QUERYABLE_D1: "OTHER_DB" } as unknown as Env;
    expect(d1Binding(closed, "DEMO_DB")).toBeUndefined();
    expect(d1Binding(env, "DEMO_DB")).toBeDefined();
    expect(await executeSql(closed, { kind: "d1", binding: "DEMO_DB" }, "sqlite", "SELECT 1", { maxRows: 1, timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: "database_unavailable", message: expect.stringContaining("QUERYABLE_D1") } });
  });

  it("gives up on a statement past its timeout", async () => {
    const slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) SELECT count(*) FROM n";
    expect(await run(slow, 1, 20)).toMatchObject({ ok: false, error: { code: "statement_timeout" } });
  });
});

describe("executeSql on a connector", () => {
  const target = { kind: "connector", url: "https://db.example", token: TOKEN } as const;

  it("guards first, then posts the statement with the token", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json({ columns: ["a"], rows: [[1], [2], [3]], rowCount: 3, truncated: false, elapsedMs: 1.5 }));
    expect(await executeSql(env, target, "postgres", "DELETE FROM t", { maxRows: 5, timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: "not_read_only" } });
    expect(spy).not.toHaveBeenCalled();
    const r = await executeSql(env, target, "postgres", "SELECT a FROM t;", { maxRows: 2, timeoutMs: 1000 });
    expect(r).toEqual({ ok: true, value: { columns: ["a"], rows: [[1], [2]], truncated: true, elapsedMs: 1.5 } });
    const [url, init] = spy.mock.calls[0] ?? [];
    expect(String(url)).toBe("https://db.example/v1/query");
    expect(new Headers(init?.headers).get("authorization")).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(String(init?.body))).toEqual({ sql: "SELECT a FROM t", maxRows: 2 });
  });

  it("maps the connector's errors", async () => {
    const answers: [number, unknown, string][] = [
      [400, { error: { code: "sql_error", message: 'column "b" does not exist' } }, "sql_error"],
      [504, { error: { code: "statement_timeout", message: "too slow" } }, "statement_timeout"],
      [401, { error: { code: "unauthorized", message: "missing or wrong bearer token" } }, "database_unavailable"],
      [500, "<html>", "database_unavailable"],
    ];
    for (const [status, body, code] of answers) {
      vi.spyOn(globalThis, "fetch").mockImplementation(async () => (typeof body === "string" ? new Response(body, { status }) : Response.json(body, { status })));
      expect(await executeSql(env, target, "postgres", "SELECT 1", { maxRows: 5, timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code } });
      vi.restoreAllMocks();
    }
  });
});

describe("DatabaseCatalogObject", () => {
  it("is create-only and answers missing names with not_found", async () => {
    const stub = env.CATALOG.getByName("catalog-test");
    const record: DatabaseRecord = {
      name: "direct",
      target: { kind: "connector", url: "https://db.example", token: TOKEN },
      schema: { dialect: "sqlite", tables: [{ name: "t", columns: [{ name: "a", type: "", primaryKey: false, nullable: true }] }] },
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    await runInDurableObject(stub, async (instance: DatabaseCatalogObject) => {
      expect(instance.put(record)).toEqual({ ok: true, value: record });
      expect(instance.put({ ...record, createdAt: "later" })).toMatchObject({ ok: false, error: { code: "conflict" } });
      expect(instance.get("direct")).toEqual({ ok: true, value: record });
      expect(instance.get("other")).toMatchObject({ ok: false, error: { code: "not_found" } });
      expect(instance.put({ ...record, name: "Bad Name" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
      expect(instance.list()).toEqual([record]);
      expect(instance.remove("direct")).toEqual({ ok: true, value: { name: "direct" } });
      expect(instance.remove("direct")).toMatchObject({ ok: false, error: { code: "not_found" } });
      expect(instance.list()).toEqual([]);
    });
  });
});
