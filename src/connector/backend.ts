/**
 * The seam between the connector's HTTP server and one database. Each backend enforces read-only
 * access itself as well, so the SQL guard is never the only thing between a model and the data.
 */
import type { DatabaseSchema } from "../core/db-schema";
import type { SqlDialect } from "../core/sql-dialect";

export interface QueryRows {
  columns: string[];
  rows: unknown[][];
  truncated: boolean;
}

/** Failures a client can act on; anything else is a bug and is thrown. */
export type BackendErrorCode = "sql_error" | "statement_timeout" | "database_unavailable";

export type BackendResult<T> = { ok: true; value: T } | { ok: false; error: { code: BackendErrorCode; message: string } };

export interface SqlBackend {
  readonly dialect: SqlDialect;
  /** The schema read from the database itself. */
  schema(): Promise<BackendResult<DatabaseSchema>>;
  /** Runs one statement that already passed the guard; at most `maxRows` rows come back. */
  query(sql: string, maxRows: number): Promise<BackendResult<QueryRows>>;
  close(): Promise<void>;
}

export const backendError = <T>(code: BackendErrorCode, message: string): BackendResult<T> => ({ ok: false, error: { code, message } });
