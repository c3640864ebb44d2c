import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import initSqlJs from "sql.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DatabaseSchemaSchema } from "../../src/core/db-schema";
import type { SqlBackend } from "../../src/connector/backend";
import { type RunningConnector, startConnector } from "../../src/connector/server";
import { SqliteBackend } from "../../src/connector/sqlite-backend";

const TOKEN = "test-connector-token-0123456789";
const TIMEOUT_MS = 600;
const FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

async function writeDatabase(file: string, customers: number): Promise<void> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(`
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note BLOB);
    CREATE TABLE orders (
      id INTEGER PRIMARY KEY,
      customer_id INTEGER NOT NULL REFERENCES customers(id),
      total REAL
    );`);
  for (let i = 1; i <= customers; i++) db.run("INSERT INTO customers (id, name, note) VALUES (?, ?, ?)", [i, `c${i}`, i === 1 ? new Uint8Array([0xca, 0xfe]) : null]);
  db.run("INSERT INTO orders (id, customer_id, total) VALUES (1, 1, 9.5), (2, 1, 20), (3, 2, NULL)");
  writeFileSync(file, db.export());
  db.close();
}

/** The real backend, recording every statement that reaches it. */
function recording(inner: SqlBackend): SqlBackend & { seen: string[] } {
  const seen: string[] = [];
  return {
    dialect: inner.dialect,
    seen,
    schema: () => inner.schema(),
    query: (sql, maxRows) => {
      seen.push(sql);
      return inner.query(sql, maxRows);
    },
    close: () => inner.close(),
  };
}

let file = "";
let backend: SqlBackend & { seen: string[] };
let connector: RunningConnector;

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), "hexflow-connector-")), "shop.sqlite");
  await writeDatabase(file, 30);
  backend = recording(await SqliteBackend.open(file, TIMEOUT_MS));
  connector = await startConnector({ backend, token: TOKEN, maxRows: 20, maxBodyBytes: 64 * 1024 }, "127.0.0.1", 0);
}, 30_000);

afterAll(() => connector.close());

function call(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? TOKEN : init.token;
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  return fetch(`${connector.url}${path}`, { ...init, headers });
}

const query = (body: unknown) => call("/v1/query", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body: unknown = await res.json();
  const parsed = ErrorBodySchema.parse(body);
  return { status: res.status, ...parsed.error };
}

const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const RowsSchema = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.array(z.unknown())),
  rowCount: z.number(),
  truncated: z.boolean(),
  elapsedMs: z.number().nonnegative(),
});

describe("the SQL connector on SQLite", () => {
  it("answers /health", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("reads the schema from the database, foreign keys included", async () => {
    const res = await call("/v1/schema");
    expect(res.status).toBe(200);
    const schema = DatabaseSchemaSchema.parse(await res.json());
    expect(schema.dialect).toBe("sqlite");
    expect(schema.tables.map((t) => t.name)).toEqual(["customers", "orders"]);
    const orders = schema.tables.find((t) => t.name === "orders");
    expect(orders?.columns).toEqual([
      { name: "id", type: "INTEGER", primaryKey: true, nullable: false },
      { name: "customer_id", type: "INTEGER", primaryKey: false, nullable: false, references: { table: "customers", column: "id" } },
      { name: "total", type: "REAL", primaryKey: false, nullable: true },
    ]);
  });

  it("runs a query and returns columns and rows, binary as \\x hex", async () => {
    const res = await query({ sql: "SELECT c.name, count(o.id) AS orders, c.note FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE c.id <= 2 GROUP BY c.id ORDER BY c.id;" });
    expect(res.status).toBe(200);
    const body = RowsSchema.parse(await res.json());
    expect(body.columns).toEqual(["name", "orders", "note"]);
    expect(body.rows).toEqual([["c1", 2, "\\xcafe"], ["c2", 1, null]]);
    expect(body.rowCount).toBe(2);
    expect(body.truncated).toBe(false);
  });

  it("caps rows at the request's maxRows and says so", async () => {
    const body = RowsSchema.parse(await (await query({ sql: "SELECT id FROM customers ORDER BY id", maxRows: 5 })).json());
    expect(body.rows).toEqual([[1], [2], [3], [4], [5]]);
    expect(body).toMatchObject({ rowCount: 5, truncated: true });
    const exact = RowsSchema.parse(await (await query({ sql: "SELECT id FROM customers WHERE id <= 5", maxRows: 5 })).json());
    expect(exact).toMatchObject({ rowCount: 5, truncated: false });
  });

  it("never returns more than the server's --max-rows, whatever the request asks", async () => {
    const body = RowsSchema.parse(await (await query({ sql: "SELECT id FROM customers", maxRows: 1000 })).json());
    expect(body).toMatchObject({ rowCount: 20, truncated: true });
  });

  it.each([
    ["no token", null],
    ["a wrong token", "test-connector-token-0123456780"],
    ["a prefix of the token", TOKEN.slice(0, 20)],
  ])("refuses %s with 401 on every route", async (_label, token) => {
    for (const [path, method] of [["/health", "GET"], ["/v1/schema", "GET"], ["/v1/query", "POST"], ["/nope", "GET"]] as const) {
      const res = await call(path, { method, token, body: method === "POST" ? JSON.stringify({ sql: "SELECT 1" }) : null });
      expect(await errorOf(res)).toMatchObject({ status: 401, code: "unauthorized" });
    }
  });

  it.each([
    ["DELETE FROM orders", "not_read_only", /found DELETE/],
    ["SELECT 1; DROP TABLE orders", "multiple_statements", /found 2/],
    ["WITH x AS (SELECT 1) INSERT INTO orders (id, customer_id) SELECT 9, 1 FROM x", "not_read_only", /found INSERT/],
    ["PRAGMA query_only = OFF", "not_read_only", /found PRAGMA/],
    ["ATTACH DATABASE '/tmp/x.db' AS x", "not_read_only", /found ATTACH/],
    ["  -- nothing\n ;", "empty_statement", /no statement/],
  ])("refuses %j with 422 before the database sees it", async (sql, code, message) => {
    const before = backend.seen.length;
    const e = await errorOf(await query({ sql }));
    expect(e).toMatchObject({ status: 422, code });
    expect(e.message).toMatch(message);
    expect(backend.seen.length).toBe(before);
  });

  it("reports the database's own error for bad SQL as 422 sql_error", async () => {
    const e = await errorOf(await query({ sql: "SELECT foo FROM customers" }));
    expect(e).toEqual({ status: 422, code: "sql_error", message: "no such column: foo" });
    expect(backend.seen.at(-1)).toBe("SELECT foo FROM customers");
  });

  it("stops a statement that runs forever with 408 and keeps serving", async () => {
    const started = performance.now();
    const e = await errorOf(await query({ sql: FOREVER }));
    expect(e).toMatchObject({ status: 408, code: "statement_timeout" });
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 2_000);
    const after = RowsSchema.parse(await (await query({ sql: "SELECT count(*) FROM orders" })).json());
    expect(after.rows).toEqual([[3]]);
  }, 20_000);

  it("queues requests behind a runaway statement and answers them afterwards", async () => {
    const [slow, next] = await Promise.all([query({ sql: FOREVER }), query({ sql: "SELECT 42 AS answer" })]);
    expect(slow.status).toBe(408);
    expect(RowsSchema.parse(await next.json()).rows).toEqual([[42]]);
  }, 20_000);

  it.each([
    ["not JSON", "{sql:", 400, "invalid_request"],
    ["no sql", JSON.stringify({ maxRows: 3 }), 400, "invalid_request"],
    ["a negative maxRows", JSON.stringify({ sql: "SELECT 1", maxRows: -1 }), 400, "invalid_request"],
    ["an unknown field", JSON.stringify({ sql: "SELECT 1", params: [1] }), 400, "invalid_request"],
    ["a body over the limit", JSON.stringify({ sql: `SELECT '${"x".repeat(70 * 1024)}'` }), 413, "payload_too_large"],
  ])("refuses %s", async (_label, body, status, code) => {
    const res = await call("/v1/query", { method: "POST", body });
    expect(await errorOf(res)).toMatchObject({ status, code });
  });

  it("answers unknown routes 404 and wrong methods 405, as JSON", async () => {
    expect(await errorOf(await call("/v1/tables"))).toMatchObject({ status: 404, code: "not_found" });
    const res = await call("/v1/query");
    expect(res.headers.get("allow")).toBe("POST");
    expect(await errorOf(res)).toMatchObject({ status: 405, code: "method_not_allowed" });
  });
});

describe("the SQLite backend behind the guard", () => {
  it("refuses writes itself (query_only), and the file never changes", async () => {
    const bytes = readFileSync(file);
    const r = await backend.query("DELETE FROM orders", 10);
    expect(r).toMatchObject({ ok: false, error: { code: "sql_error", message: expect.stringMatching(/readonly|read-only/) } });
    const count = await backend.query("SELECT count(*) FROM orders", 10);
    expect(count).toMatchObject({ ok: true, value: { rows: [[3]] } });
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it("runs only the first of several statements", async () => {
    const r = await backend.query("SELECT 1; DELETE FROM orders", 10);
    expect(r).toMatchObject({ ok: true, value: { rows: [[1]] } });
    expect(await backend.query("SELECT count(*) FROM orders", 10)).toMatchObject({ ok: true, value: { rows: [[3]] } });
  });

  it("follows the file when the database changes", async () => {
    await writeDatabase(file, 7);
    const r = await backend.query("SELECT count(*) FROM customers", 10);
    expect(r).toMatchObject({ ok: true, value: { rows: [[7]] } });
  });

  it("will not open a file that is not a database", async () => {
    const bad = join(mkdtempSync(join(tmpdir(), "hexflow-connector-")), "bad.sqlite");
    writeFileSync(bad, "this is not a database ".repeat(100));
    await expect(SqliteBackend.open(bad, TIMEOUT_MS)).rejects.toThrow(/file is not a database/);
  }, 20_000);
});
