/**
 * The on-prem SQL connector: serves one database's schema and read-only queries over HTTP, to be
 * reached through a Cloudflare Tunnel.
 *   npm run connector -- --sqlite FILE | --postgres URL [--schema public] [--port 8790] [--host 127.0.0.1]
 *                        [--token T | env HEXFLOW_CONNECTOR_TOKEN] [--max-rows 1000] [--timeout-ms 5000]
 * Prints `ready http://HOST:PORT` once listening; a usage mistake prints one `error: ...` line and exits 2.
 */
import { existsSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import type { SqlBackend } from "../src/connector/backend";
import { PostgresBackend } from "../src/connector/postgres-backend";
import { MIN_TOKEN_LENGTH, startConnector } from "../src/connector/server";
import { SqliteBackend } from "../src/connector/sqlite-backend";
import { UsageError, numberArg, runCli } from "./lib/cli";

const HELP = `usage: npm run connector -- (--sqlite FILE | --postgres URL) [options]
  --sqlite FILE       a SQLite database file (read into memory, re-read when it changes)
  --postgres URL      postgres://user:password@host:5432/db
  --schema NAME       the Postgres schema to describe and query (default public)
  --port N            default 8790; 0 picks a free port
  --host ADDR         default 127.0.0.1
  --token T           bearer token clients must send, >= ${MIN_TOKEN_LENGTH} characters (or HEXFLOW_CONNECTOR_TOKEN)
  --max-rows N        most rows one query returns (default 1000)
  --timeout-ms MS     statement timeout (default 5000)`;

const parse = () =>
  parseArgs({
    args: process.argv.slice(2),
    options: {
      sqlite: { type: "string" },
      postgres: { type: "string" },
      schema: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      "max-rows": { type: "string" },
      "timeout-ms": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values;
type Flags = ReturnType<typeof parse>;

const isErrno = (e: unknown, ...codes: string[]) => e instanceof Error && "code" in e && codes.includes(String(e.code));
const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function openBackend(values: Flags, timeoutMs: number): Promise<SqlBackend> {
  if ((values.sqlite === undefined) === (values.postgres === undefined)) throw new UsageError("give exactly one of --sqlite FILE or --postgres URL");
  if (values.sqlite !== undefined) {
    const file = values.sqlite;
    if (values.schema !== undefined) throw new UsageError("--schema applies to --postgres only");
    if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`SQLite file not found: ${file}`);
    return SqliteBackend.open(file, timeoutMs).catch((e: unknown) => {
      throw new UsageError(reason(e));
    });
  }
  const url = values.postgres ?? "";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError("--postgres must be a URL such as postgres://user:password@host:5432/db");
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") throw new UsageError(`--postgres must be a postgres:// URL (got ${parsed.protocol})`);
  const where = `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  return PostgresBackend.open(url, { schema: values.schema ?? "public", timeoutMs }).catch((e: unknown) => {
    throw new UsageError(`cannot connect to ${where}: ${reason(e)}`);
  });
}

runCli(async () => {
  const values = parse();
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const token = values.token ?? process.env.HEXFLOW_CONNECTOR_TOKEN ?? "";
  if (token === "") throw new UsageError("a token is required: --token T or HEXFLOW_CONNECTOR_TOKEN");
  if (token.length < MIN_TOKEN_LENGTH) throw new UsageError(`the token must have at least ${MIN_TOKEN_LENGTH} characters`);
  const integer = (min: number) => (n: number) => Number.isInteger(n) && n >= min;
  const port = numberArg("port", values.port, 8790, (n) => integer(0)(n) && n <= 65_535);
  const maxRows = numberArg("max-rows", values["max-rows"], 1000, integer(1));
  const timeoutMs = numberArg("timeout-ms", values["timeout-ms"], 5000, integer(1));
  const host = values.host ?? "127.0.0.1";

  const backend = await openBackend(values, timeoutMs);
  const connector = await startConnector({ backend, token, maxRows }, host, port).catch(async (e: unknown) => {
    await backend.close();
    if (isErrno(e, "EADDRINUSE", "EADDRNOTAVAIL", "EACCES")) throw new UsageError(`cannot listen on ${host}:${port} (${reason(e)})`);
    throw e;
  });
  process.stdout.write(`ready ${connector.url}\n`);
  const shutdown = () => {
    void connector.close().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
});
