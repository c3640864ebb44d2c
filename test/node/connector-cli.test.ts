import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import initSqlJs from "sql.js";
import { afterEach, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const TOKEN = "cli-test-token-0123456789";
const env = { ...process.env, HEXFLOW_CONNECTOR_TOKEN: "" };

function connectorSync(args: string[], extraEnv: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/connector.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000, env: { ...env, ...extraEnv } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function sqliteFile(): Promise<string> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');");
  const file = join(mkdtempSync(join(tmpdir(), "hexflow-cli-")), "t.sqlite");
  writeFileSync(file, db.export());
  db.close();
  return file;
}

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill("SIGTERM");
  child = undefined;
});

/** Starts the connector and resolves with the URL from its `ready` line. */
function start(args: string[], extraEnv: Record<string, string>): Promise<string> {
  const proc = spawn(process.execPath, ["--import", "tsx", "scripts/connector.ts", ...args], { cwd: root, env: { ...env, ...extraEnv } });
  child = proc;
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^ready (http:\/\/\S+)\n/.exec(out);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    proc.on("exit", (code) => reject(new Error(`connector exited with ${String(code)}: ${err}`)));
  });
}

describe("npm run connector", () => {
  it("prints one ready line and serves the database, token from the environment", async () => {
    const url = await start(["--sqlite", await sqliteFile(), "--port", "0"], { HEXFLOW_CONNECTOR_TOKEN: TOKEN });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/v1/query`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ sql: "SELECT name FROM t ORDER BY id" }),
    });
    expect(await res.json()).toMatchObject({ columns: ["name"], rows: [["one"], ["two"]], rowCount: 2, truncated: false });
    expect((await fetch(`${url}/health`)).status).toBe(401);
  }, 60_000);

  it.each([
    [["--sqlite", "/no/such/file.sqlite", "--token", TOKEN], /^error: SQLite file not found: \/no\/such\/file\.sqlite$/],
    [["--sqlite", "x.db"], /^error: a token is required/],
    [["--sqlite", "x.db", "--token", "short"], /^error: the token must have at least 16 characters$/],
    [["--token", TOKEN], /^error: give exactly one of --sqlite FILE or --postgres URL$/],
    [["--sqlite", "x.db", "--postgres", "postgres://h/db", "--token", TOKEN], /^error: give exactly one of/],
    [["--postgres", "mysql://h/db", "--token", TOKEN], /^error: --postgres must be a postgres:\/\/ URL/],
    [["--sqlite", "x.db", "--token", TOKEN, "--max-rows", "0"], /^error: --max-rows must be a valid number/],
    [["--sqlite", "x.db", "--token", TOKEN, "--port", "70000"], /^error: --port must be a valid number/],
    [["--bogus"], /^error: Unknown option '--bogus'/],
  ])("refuses %j with one line and exit code 2", (args, message) => {
    const r = connectorSync(args);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err.trim()).toMatch(message);
    expect(r.out).toBe("");
  }, 60_000);

  it("names a file that is not a SQLite database", () => {
    const file = join(mkdtempSync(join(tmpdir(), "hexflow-cli-")), "notes.txt");
    writeFileSync(file, "not a database at all, just some text ".repeat(50));
    const r = connectorSync(["--sqlite", file, "--token", TOKEN]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: cannot open .*notes\.txt: .*file is not a database/);
  }, 60_000);
});
