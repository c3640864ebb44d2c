/**
 * The Worker's connector client (src/db/connector-client.ts, executeSql's connector path) against the
 * real connector server on a SQLite file: the client uses fetch alone, so it runs here as in workerd.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import initSqlJs from "sql.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningConnector, startConnector } from "../../src/connector/server";
import { SqliteBackend } from "../../src/connector/sqlite-backend";
import { queryConnector, readConnectorSchema } from "../../src/db/connector-client";

const TOKEN = "db-connector-token-0123456789";
const SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

/** A loopback URL where nothing listens: a port the OS just handed out and took back. */
async function freePortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

let connector: RunningConnector;
let target: { url: string; token: string };

beforeAll(async () => {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(`CREATE TABLE shops (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
          CREATE TABLE items (id INTEGER PRIMARY KEY, shop_id INTEGER NOT NULL REFERENCES shops(id), label TEXT);`);
  db.run("INSERT INTO shops VALUES (1, 'north'), (2, 'south')");
  for (let i = 1; i <= 40; i++) db.run("INSERT INTO items VALUES (?, ?, ?)", [i, 1 + (i % 2), `item ${i}`]);
  const file = join(mkdtempSync(join(tmpdir(), "hexflow-db-exec-")), "shop.sqlite");
  writeFileSync(file, db.export());
  db.close();
  connector = await startConnector({ backend: await SqliteBackend.open(file, 500), token: TOKEN, maxRows: 25 }, "127.0.0.1", 0);
  target = { url: connector.url, token: TOKEN };
}, 30_000);

afterAll(() => connector.close());

describe("executeSql's connector path against the real connector", () => {
  it("reads the schema", async () => {
    const r = await readConnectorSchema(target, 5_000);
    expect(r.ok && r.value.tables.map((t) => t.name)).toEqual(["items", "shops"]);
    expect(r.ok && r.value.tables[0]?.columns[1]).toEqual({ name: "shop_id", type: "INTEGER", primaryKey: false, nullable: false, references: { table: "shops", column: "id" } });
  });

  it("returns rows, capped at the lower of its own and the connector's limit", async () => {
    const r = await queryConnector(target, "SELECT id, label FROM items ORDER BY id", 3, 5_000);
    expect(r).toMatchObject({ ok: true, value: { columns: ["id", "label"], rows: [[1, "item 1"], [2, "item 2"], [3, "item 3"]], truncated: true } });
    const big = await queryConnector(target, "SELECT id FROM items", 100, 5_000);
    expect(big.ok && [big.value.rows.length, big.value.truncated]).toEqual([25, true]);
    const exact = await queryConnector({ ...target, url: `${connector.url}/` }, "SELECT count(*) AS n FROM items", 1, 5_000);
    expect(exact).toMatchObject({ ok: true, value: { columns: ["n"], rows: [[40]], truncated: false } });
  });

  it("passes SQL errors and the connector's guard through with their codes", async () => {
    const bad = await queryConnector(target, "SELECT nope FROM items", 5, 5_000);
    expect(bad).toMatchObject({ ok: false, error: { code: "sql_error", message: expect.stringContaining("no such column: nope") } });
    expect(await queryConnector(target, "DELETE FROM items", 5, 5_000)).toMatchObject({ ok: false, error: { code: "not_read_only" } });
    expect(await queryConnector(target, "SELECT 1; SELECT 2", 5, 5_000)).toMatchObject({ ok: false, error: { code: "multiple_statements" } });
    expect(await queryConnector(target, "SELECT count(*) FROM items", 5, 5_000)).toMatchObject({ ok: true });
  });

  it("reports the connector's statement timeout and its own", async () => {
    expect(await queryConnector(target, SLOW, 1, 10_000)).toMatchObject({ ok: false, error: { code: "statement_timeout" } });
    expect(await queryConnector(target, SLOW, 1, 100)).toMatchObject({ ok: false, error: { code: "statement_timeout", message: expect.stringContaining("100 ms") } });
  });

  it("says the database is unavailable for a wrong token or no connector", async () => {
    const wrong = await queryConnector({ ...target, token: "wrong-token-0123456789" }, "SELECT 1", 1, 5_000);
    expect(wrong).toEqual({ ok: false, error: { code: "database_unavailable", message: expect.stringContaining("refused the registered token") } });
    const nobody = await freePortUrl();
    expect(await queryConnector({ ...target, url: nobody }, "SELECT 1", 1, 5_000)).toMatchObject({ ok: false, error: { code: "database_unavailable", message: expect.stringContaining("cannot be reached") } });
    expect(await readConnectorSchema({ ...target, url: nobody }, 5_000)).toMatchObject({ ok: false, error: { code: "database_unavailable" } });
  });
});
