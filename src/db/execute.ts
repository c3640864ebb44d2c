/**
 * Runs one read-only statement on a registered database, D1 or connector, and reads its schema. Every
 * statement passes the read-only guard here first, whoever calls, so no path reaches a database without it.
 */
import type { DatabaseSchemaResult, DatabaseTarget, SqlExecResult } from "../core/database";
import { checkReadOnlySql } from "../core/sql-guard";
import type { SqlDialect } from "../core/sql-dialect";
import { queryConnector, readConnectorSchema } from "./connector-client";
import { asD1Database, queryD1, readD1Schema } from "./d1";

export interface ExecuteOptions {
  /** Rows beyond this are dropped and the result says `truncated`. */
  maxRows: number;
  timeoutMs: number;
}

const SCHEMA_TIMEOUT_MS = 10_000;

/**
 * The D1 database bound as `binding`, or undefined when the Worker has no such D1 binding or it is not
 * listed in QUERYABLE_D1: D1 databases the service keeps for itself are never open to Text-to-SQL.
 */
export function d1Binding(env: Env, binding: string): D1Database | undefined {
  const queryable: string = env.QUERYABLE_D1;
  if (!queryable.split(",").some((b) => b.trim() === binding)) return undefined;
  const bindings: object = env;
  // Binding names are upper case, so `in` never finds Object.prototype's members.
  return binding in bindings ? asD1Database((bindings as Record<string, unknown>)[binding]) : undefined;
}

const noBinding = (binding: string) => ({ ok: false as const, error: { code: "database_unavailable" as const, message: `no D1 binding ${binding} is open to queries (QUERYABLE_D1 lists them)` } });

export async function executeSql(env: Env, target: DatabaseTarget, dialect: SqlDialect, sql: string, opts: ExecuteOptions): Promise<SqlExecResult> {
  const guard = checkReadOnlySql(sql, dialect);
  if (!guard.ok) return guard;
  if (target.kind === "connector") return queryConnector(target, guard.value.statement, opts.maxRows, opts.timeoutMs);
  // D1 is SQLite whatever the caller says: its lexer decides where strings and comments end.
  const sqlite = dialect === "sqlite" ? guard : checkReadOnlySql(sql, "sqlite");
  if (!sqlite.ok) return sqlite;
  const db = d1Binding(env, target.binding);
  if (db === undefined) return noBinding(target.binding);
  return queryD1(db, sqlite.value.statement, opts.maxRows, opts.timeoutMs);
}

export async function readSchema(env: Env, target: DatabaseTarget): Promise<DatabaseSchemaResult> {
  if (target.kind === "connector") return readConnectorSchema(target, SCHEMA_TIMEOUT_MS);
  const db = d1Binding(env, target.binding);
  if (db === undefined) return noBinding(target.binding);
  return readD1Schema(db, SCHEMA_TIMEOUT_MS);
}
