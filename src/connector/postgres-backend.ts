/**
 * PostgreSQL through `pg`. Every request runs in its own `BEGIN READ ONLY` transaction with a local
 * statement timeout and search path, and is rolled back. A query runs as a server-side cursor, so
 * the database stops after maxRows + 1 rows instead of sending every row the statement produces.
 */
import pg from "pg";
import type { DatabaseSchema } from "../core/db-schema";
import { type BackendErrorCode, type BackendResult, backendError, type QueryRows, type SqlBackend } from "./backend";
import { toJsonValue } from "./json-values";
import { readPostgresSchema } from "./postgres-schema";

export interface PostgresOptions {
  /** The schema that /v1/schema describes and unqualified names resolve in. */
  schema: string;
  timeoutMs: number;
  /** Pool size; one per concurrently running query. */
  maxConnections?: number;
}

/** Dates and times as Postgres prints them, not shifted into the connector's time zone by JavaScript's Date. */
function textDateTimes(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  for (const oid of [1082, 1083, 1114, 1184, 1186, 1266]) types.setTypeParser(oid, "text", (v: string) => v);
  return types;
}

/** SQLSTATE classes that mean the database, not the statement, is the problem. */
const UNAVAILABLE = /^(08|28|3D|53|57P0[1-4])/;

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The statements one query runs, in order; exported so that their text is testable without a server. */
export function queryPlan(sql: string, maxRows: number): { declare: string; fetch: string } {
  return { declare: `DECLARE hexflow_rows NO SCROLL CURSOR FOR ${sql}`, fetch: `FETCH FORWARD ${maxRows + 1} FROM hexflow_rows` };
}

function classify(e: unknown, timeoutMs: number): { code: BackendErrorCode; message: string } {
  if (e instanceof pg.DatabaseError) {
    const sqlState = e.code ?? "";
    if (sqlState === "57014") return { code: "statement_timeout", message: `the statement ran longer than ${timeoutMs} ms and was cancelled` };
    if (UNAVAILABLE.test(sqlState)) return { code: "database_unavailable", message: e.message };
    return { code: "sql_error", message: e.message };
  }
  const message = e instanceof Error ? e.message : String(e);
  if (/timeout/i.test(message)) return { code: "statement_timeout", message: `the statement did not finish within ${timeoutMs} ms` };
  return { code: "database_unavailable", message };
}

export class PostgresBackend implements SqlBackend {
  readonly dialect = "postgres" as const;

  /** Clients whose connection failed; they are destroyed, never returned to the pool. */
  private readonly lost = new WeakSet<pg.PoolClient>();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
  ) {
    // An unheard 'error' event ends the process: every client gets a listener, checked out or idle.
    pool.on("connect", (client) => client.on("error", () => this.lost.add(client)));
    pool.on("error", () => undefined);
  }

  /** Connects once to fail early on a wrong URL, password or schema. */
  static async open(connectionString: string, options: PostgresOptions): Promise<PostgresBackend> {
    const pool = new pg.Pool({
      connectionString,
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: Math.max(options.timeoutMs, 5_000),
      // The server cancels at statement_timeout; this catches a server or network that never answers.
      query_timeout: options.timeoutMs + 1_000,
      types: textDateTimes(),
    });
    const backend = new PostgresBackend(pool, options);
    const probe = await backend.readOnly(async (client) => {
      const r = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [options.schema]);
      return r.rowCount === 1;
    });
    if (!probe.ok || !probe.value) {
      await pool.end();
      throw new Error(probe.ok ? `schema "${options.schema}" does not exist` : probe.error.message);
    }
    return backend;
  }

  schema(): Promise<BackendResult<DatabaseSchema>> {
    return this.readOnly((client) =>
      readPostgresSchema(async (text, values) => (await client.query(text, values)).rows, this.options.schema),
    );
  }

  query(sql: string, maxRows: number): Promise<BackendResult<QueryRows>> {
    const plan = queryPlan(sql, maxRows);
    return this.readOnly(async (client) => {
      // Extended protocol: the server refuses more than one statement in it, whatever the guard missed.
      const declare: pg.QueryConfig & { queryMode: "extended" } = { text: plan.declare, queryMode: "extended" };
      await client.query(declare);
      const r = await client.query({ text: plan.fetch, rowMode: "array" });
      const rows: unknown[][] = r.rows.slice(0, maxRows).map((row: unknown[]) => row.map(toJsonValue));
      return { columns: r.fields.map((f) => f.name), rows, truncated: r.rows.length > maxRows };
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async readOnly<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<BackendResult<T>> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      return backendError("database_unavailable", `cannot connect to the database: ${e instanceof Error ? e.message : String(e)}`);
    }
    let failed = false;
    try {
      await client.query("BEGIN TRANSACTION READ ONLY");
      await client.query(
        "SELECT set_config('statement_timeout', $1, true), set_config('search_path', $2, true), set_config('standard_conforming_strings', 'on', true)",
        [String(this.options.timeoutMs), `${quoteIdent(this.options.schema)}, pg_catalog`],
      );
      return { ok: true, value: await work(client) };
    } catch (e) {
      failed = true;
      return { ok: false, error: classify(e, this.options.timeoutMs) };
    } finally {
      // After an error the connection is dropped, not rolled back and reused: closing it aborts the transaction
      // on the server, and no later request inherits a connection whose protocol state is in doubt.
      if (!failed && !this.lost.has(client)) await client.query("ROLLBACK").catch(() => (failed = true));
      client.release(failed || this.lost.has(client));
    }
  }
}
