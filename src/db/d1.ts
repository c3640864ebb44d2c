/**
 * Read-only queries and schema reads on a D1 database bound to this Worker. The caller (execute.ts)
 * has passed the SQL through the read-only guard; D1 itself has no read-only mode.
 */
import type { DatabaseSchemaResult, SqlExecError, SqlExecResult } from "../core/database";
import { SQLITE_SCHEMA_QUERIES, sqliteSchemaFromRows } from "../core/sqlite-schema";
import { tokenizeSql } from "../core/sql-tokens";
import { jsonCell } from "./values";
import { TimeoutError, withTimeout } from "./with-timeout";

/** A binding is a D1 database when it has D1's methods; anything else (a secret, a namespace) is not. */
export function asD1Database(value: unknown): D1Database | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const methods = value as Partial<Record<"prepare" | "batch" | "exec", unknown>>;
  return typeof methods.prepare === "function" && typeof methods.batch === "function" && typeof methods.exec === "function" ? (value as D1Database) : undefined;
}

const failed = (code: SqlExecError["code"], message: string) => ({ ok: false as const, error: { code, message } });

/** SQLite's own message, without D1's wrapping ("D1_ERROR: ... : SQLITE_ERROR"). */
export function sqliteMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^(?:Error: )?D1_ERROR: /, "").replace(/: SQLITE_[A-Z_]+$/, "");
}

/** SQLite's verdict on the statement (a model can rewrite it), not a database or network that failed. */
function sqlFault(e: unknown): boolean {
  const code = /: (SQLITE_[A-Z_]+)$/.exec(e instanceof Error ? e.message : String(e))?.[1];
  return code !== undefined && !["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_NOMEM", "SQLITE_CORRUPT", "SQLITE_CANTOPEN"].includes(code);
}

/** A subquery's duplicate column names come back as `name:1`, `name:2`: give them their own names back. */
function originalColumnNames(columns: readonly string[]): string[] {
  return columns.map((c, i) => {
    const m = /^(.*):\d+$/.exec(c);
    return m?.[1] !== undefined && columns.slice(0, i).includes(m[1]) ? m[1] : c;
  });
}

/** The row cap wraps the statement in a subquery, so its parentheses must be its own. */
function balanced(statement: string): boolean {
  const lexed = tokenizeSql(statement, "sqlite");
  if (!lexed.ok) return false;
  let depth = 0;
  for (const t of lexed.tokens) {
    if (t.kind === "punct" && t.text === "(") depth++;
    else if (t.kind === "punct" && t.text === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

export async function queryD1(db: D1Database, statement: string, maxRows: number, timeoutMs: number): Promise<SqlExecResult> {
  if (!balanced(statement)) return failed("sql_error", "unbalanced parentheses");
  const cap = Math.max(0, Math.floor(maxRows));
  // One row past the cap says whether there were more; the newlines keep a trailing -- comment inside.
  const wrapped = `SELECT * FROM (\n${statement}\n) LIMIT ${cap + 1}`;
  const started = Date.now();
  try {
    // D1 cannot cancel a statement: past the timeout its answer is dropped, and the statement runs on in D1.
    const [header, ...rows] = await withTimeout(db.prepare(wrapped).raw<unknown[]>({ columnNames: true }), timeoutMs);
    // Local D1 runs on this thread and blocks the timer; an answer that came late is late all the same.
    if (Date.now() - started > timeoutMs) throw new TimeoutError(timeoutMs);
    const columns = originalColumnNames((header ?? []).map(String));
    return {
      ok: true,
      value: { columns, rows: rows.slice(0, cap).map((r) => r.map(jsonCell)), truncated: rows.length > cap, elapsedMs: Date.now() - started },
    };
  } catch (e) {
    if (e instanceof TimeoutError) return failed("statement_timeout", `the statement ran longer than ${timeoutMs} ms`);
    return failed(sqlFault(e) ? "sql_error" : "database_unavailable", sqliteMessage(e));
  }
}

/** Three statements in one batch, whatever the number of tables. */
export async function readD1Schema(db: D1Database, timeoutMs: number): Promise<DatabaseSchemaResult> {
  try {
    const q = SQLITE_SCHEMA_QUERIES;
    const [tables, columns, keys] = await withTimeout(db.batch<Record<string, unknown>>([db.prepare(q.tables), db.prepare(q.columns), db.prepare(q.foreignKeys)]), timeoutMs);
    return { ok: true, value: sqliteSchemaFromRows(tables?.results ?? [], columns?.results ?? [], keys?.results ?? []) };
  } catch (e) {
    if (e instanceof TimeoutError) return failed("database_unavailable", `reading the schema took longer than ${timeoutMs} ms`);
    return failed("database_unavailable", `the schema cannot be read: ${sqliteMessage(e)}`);
  }
}
