/**
 * The Worker's client for an on-prem SQL connector (src/connector/server.ts): POST /v1/query and
 * GET /v1/schema with the bearer token. It uses fetch alone, so it runs in Node as well as in workerd.
 */
import { z } from "zod";
import type { DatabaseSchemaResult, SqlExecError, SqlExecResult } from "../core/database";
import { DatabaseSchemaSchema } from "../core/db-schema";

export interface ConnectorTarget {
  url: string;
  token: string;
}

const RowsSchema = z.object({ columns: z.array(z.string()), rows: z.array(z.array(z.unknown())), truncated: z.boolean(), elapsedMs: z.number() });
const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** Codes the connector sends that mean the same here; any other failure is the connector's, not the SQL's. */
const PASSED_THROUGH = new Set<string>(["sql_error", "statement_timeout", "database_unavailable", "not_read_only", "multiple_statements", "empty_statement"]);

const failed = (code: SqlExecError["code"], message: string) => ({ ok: false as const, error: { code, message } });

type Answer = { ok: true; status: number; body: unknown } | { ok: false; error: SqlExecError };

async function call(target: ConnectorTarget, path: string, init: RequestInit, timeoutMs: number, onTimeout: SqlExecError): Promise<Answer> {
  const url = `${target.url.replace(/\/+$/, "")}${path}`;
  let res: Response;
  try {
    res = await fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${target.token}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) return { ok: false, error: onTimeout };
    return failed("database_unavailable", `the connector at ${target.url} cannot be reached: ${e instanceof Error ? e.message : String(e)}`);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return failed("database_unavailable", `the connector at ${target.url} answered ${res.status} without JSON`);
  }
  return { ok: true, status: res.status, body };
}

function connectorError(target: ConnectorTarget, status: number, body: unknown): SqlExecError {
  const parsed = ErrorSchema.safeParse(body);
  if (!parsed.success) return { code: "database_unavailable", message: `the connector at ${target.url} answered ${status} with an unexpected body` };
  const { code, message } = parsed.data.error;
  if (PASSED_THROUGH.has(code)) return { code: code as SqlExecError["code"], message };
  if (code === "unauthorized") return { code: "database_unavailable", message: `the connector at ${target.url} refused the registered token` };
  return { code: "database_unavailable", message: `the connector at ${target.url} answered ${status} ${code}: ${message}` };
}

export async function queryConnector(target: ConnectorTarget, sql: string, maxRows: number, timeoutMs: number): Promise<SqlExecResult> {
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ sql, maxRows: Math.max(0, Math.floor(maxRows)) }) };
  const answer = await call(target, "/v1/query", init, timeoutMs, { code: "statement_timeout", message: `the statement ran longer than ${timeoutMs} ms` });
  if (!answer.ok) return answer;
  if (answer.status !== 200) return { ok: false, error: connectorError(target, answer.status, answer.body) };
  const rows = RowsSchema.safeParse(answer.body);
  if (!rows.success) return failed("database_unavailable", `the connector at ${target.url} sent rows in an unexpected shape`);
  const { columns, truncated, elapsedMs } = rows.data;
  // The connector caps at its own maximum too; the lower of the two caps wins.
  const capped = rows.data.rows.length > maxRows;
  return { ok: true, value: { columns, rows: rows.data.rows.slice(0, maxRows), truncated: truncated || capped, elapsedMs } };
}

export async function readConnectorSchema(target: ConnectorTarget, timeoutMs: number): Promise<DatabaseSchemaResult> {
  const answer = await call(target, "/v1/schema", { method: "GET" }, timeoutMs, { code: "database_unavailable", message: `the connector at ${target.url} did not answer in ${timeoutMs} ms` });
  if (!answer.ok) return answer;
  if (answer.status !== 200) return { ok: false, error: connectorError(target, answer.status, answer.body) };
  const schema = DatabaseSchemaSchema.safeParse(answer.body);
  if (!schema.success) return failed("database_unavailable", `the connector at ${target.url} sent a schema in an unexpected shape`);
  return { ok: true, value: schema.data };
}
