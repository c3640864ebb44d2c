import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DatabaseSchemaSchema } from "../../src/core/db-schema";
import { PostgresBackend, queryPlan } from "../../src/connector/postgres-backend";
import { type RunningConnector, startConnector } from "../../src/connector/server";

// PGlite (PostgreSQL compiled to WebAssembly) cannot cancel a running statement on statement_timeout, so
// the timeout test here exercises the client-side deadline; the setting itself is checked by reading it back.
const TOKEN = "pg-connector-token-0123456789";
const TIMEOUT_MS = 400;
const root = new URL("../..", import.meta.url).pathname;

let fixture: ChildProcess | undefined;
let url = "";
let backend: PostgresBackend;
let connector: RunningConnector;

function startFixture(): Promise<string> {
  const proc = spawn(process.execPath, ["--import", "tsx", "test/node/pglite-fixture.ts"], { cwd: root });
  fixture = proc;
  return new Promise((resolve, reject) => {
    let out = "";
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^port (\S+)\n/.exec(out);
      if (m?.[1] !== undefined) resolve(`postgres://postgres:postgres@${m[1]}/postgres`);
    });
    proc.on("exit", (code) => reject(new Error(`the PGlite fixture exited with ${String(code)}`)));
  });
}

beforeAll(async () => {
  url = await startFixture();
  backend = await PostgresBackend.open(url, { schema: "public", timeoutMs: TIMEOUT_MS });
  connector = await startConnector({ backend, token: TOKEN, maxRows: 20 }, "127.0.0.1", 0);
}, 90_000);

afterAll(async () => {
  await connector.close();
  fixture?.kill("SIGTERM");
});

const RowsSchema = z.object({ columns: z.array(z.string()), rows: z.array(z.array(z.unknown())), rowCount: z.number(), truncated: z.boolean() });
const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

function post(sql: string, maxRows?: number): Promise<Response> {
  return fetch(`${connector.url}/v1/query`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ sql, maxRows }) });
}

describe("the SQL connector on PostgreSQL (PGlite over the wire protocol)", () => {
  it("reads the configured schema from information_schema, foreign keys and types included", async () => {
    const res = await fetch(`${connector.url}/v1/schema`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const schema = DatabaseSchemaSchema.parse(await res.json());
    expect(schema.dialect).toBe("postgres");
    expect(schema.tables.map((t) => t.name)).toEqual(["customers", "orders"]);
    expect(schema.tables[0]?.columns.map((c) => `${c.name} ${c.type}${c.primaryKey ? " pk" : ""}${c.nullable ? "" : " not null"}`)).toEqual([
      "id integer pk not null",
      "name character varying(40) not null",
      "born date",
      "photo bytea",
    ]);
    expect(schema.tables[1]?.columns.find((c) => c.name === "customer_id")?.references).toEqual({ table: "customers", column: "id" });
    expect(schema.tables[1]?.columns.find((c) => c.name === "tags")?.type).toBe("text[]");
  });

  it("returns rows as the database prints them: dates as text, bytea as \\x hex, numeric as strings, arrays", async () => {
    const res = await post("SELECT c.id, c.born, c.photo, o.total, o.tags FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id");
    expect(res.status).toBe(200);
    const body = RowsSchema.parse(await res.json());
    expect(body.columns).toEqual(["id", "born", "photo", "total", "tags"]);
    expect(body.rows).toEqual([
      [1, "2000-01-02", "\\xcafe", "9.50", ["a", "b"]],
      [1, "2000-01-02", "\\xcafe", "20.00", null],
      [2, "2000-01-03", null, null, []],
    ]);
  });

  it("fetches at most maxRows + 1 rows through a cursor and reports truncation", async () => {
    expect(RowsSchema.parse(await (await post("SELECT id FROM customers ORDER BY id", 4)).json())).toMatchObject({
      rows: [[1], [2], [3], [4]],
      rowCount: 4,
      truncated: true,
    });
    expect(RowsSchema.parse(await (await post("SELECT id FROM customers")).json())).toMatchObject({ rowCount: 20, truncated: true });
    expect(RowsSchema.parse(await (await post("VALUES (1), (2)", 2)).json())).toMatchObject({ rowCount: 2, truncated: false });
  });

  it("passes the database's error for bad SQL through as 422 sql_error", async () => {
    const res = await post("SELECT foo FROM customers");
    expect(res.status).toBe(422);
    expect(ErrorSchema.parse(await res.json()).error).toEqual({ code: "sql_error", message: 'column "foo" does not exist' });
  });

  it("refuses SELECT ... INTO with 422 not_read_only", async () => {
    const res = await post("SELECT * INTO stolen FROM customers");
    expect(res.status).toBe(422);
    expect(ErrorSchema.parse(await res.json()).error.code).toBe("not_read_only");
  });
});

describe("the Postgres backend behind the guard", () => {
  it("runs every statement in a read-only transaction with the statement timeout set", async () => {
    const r = await backend.query("SELECT current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('search_path')", 1);
    expect(r).toEqual({ ok: true, value: { columns: ["current_setting", "current_setting", "current_setting"], rows: [["on", `${TIMEOUT_MS}ms`, '"public", pg_catalog']], truncated: false } });
  });

  it("refuses writes itself: in the cursor, and in functions the read-only transaction forbids", async () => {
    expect(await backend.query("DELETE FROM orders", 5)).toMatchObject({ ok: false, error: { code: "sql_error" } });
    expect(await backend.query("SELECT nextval('ticket_seq')", 5)).toMatchObject({
      ok: false,
      error: { code: "sql_error", message: expect.stringMatching(/read-only transaction/) },
    });
    expect(await backend.query("SELECT count(*) FROM orders", 5)).toMatchObject({ ok: true, value: { rows: [["3"]] } });
  });

  it("reports statement_timeout when the database does not answer in time, then keeps working", async () => {
    const started = performance.now();
    const r = await backend.query("SELECT pg_sleep(3)", 1);
    expect(r).toMatchObject({ ok: false, error: { code: "statement_timeout" } });
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(await backend.query("SELECT 1 AS one", 1)).toMatchObject({ ok: true, value: { rows: [[1]] } });
  }, 20_000);

  it("describes and queries another schema when configured, unqualified names included", async () => {
    const sales = await PostgresBackend.open(url, { schema: "sales", timeoutMs: TIMEOUT_MS, maxConnections: 1 });
    try {
      expect(await sales.schema()).toMatchObject({ ok: true, value: { tables: [{ name: "regions", columns: [{ name: "code", primaryKey: true }] }] } });
      expect(await sales.query("SELECT code FROM regions ORDER BY code", 5)).toMatchObject({ ok: true, value: { rows: [["eu"], ["us"]] } });
    } finally {
      await sales.close();
    }
  });

  it("will not open a schema that does not exist", async () => {
    await expect(PostgresBackend.open(url, { schema: "nope", timeoutMs: TIMEOUT_MS })).rejects.toThrow('schema "nope" does not exist');
  });
});

describe("queryPlan", () => {
  it("declares a cursor over the statement and fetches one row past the cap", () => {
    expect(queryPlan("SELECT 1", 10)).toEqual({ declare: "DECLARE hexflow_rows NO SCROLL CURSOR FOR SELECT 1", fetch: "FETCH FORWARD 11 FROM hexflow_rows" });
  });
});
