/**
 * A registered database: the name Text-to-SQL workflows refer to it by, where its data lives (a D1
 * binding of this Worker, or an on-prem SQL connector reached over HTTPS with a bearer token) and the
 * schema that prompts show. Also the shape of one query's result, whichever target ran it.
 */
import { z } from "zod";
import { type DatabaseSchema, DatabaseSchemaSchema } from "./db-schema";

export const DatabaseNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "a database name is 1-63 characters of a-z, 0-9, _ and -, starting with a letter or digit");

export const D1BindingSchema = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]{0,62}$/, "a D1 binding is an upper-case Worker binding name (A-Z, 0-9, _), such as DEMO_DB");

export const ConnectorUrlSchema = z.url({ protocol: /^https?$/, error: "the connector url must be an http:// or https:// URL" });

export const DatabaseTargetSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("d1"), binding: D1BindingSchema }),
  z.strictObject({ kind: z.literal("connector"), url: ConnectorUrlSchema, token: z.string().min(16).max(512) }),
]);
export type DatabaseTarget = z.infer<typeof DatabaseTargetSchema>;

export const DatabaseRecordSchema = z.object({
  name: DatabaseNameSchema,
  target: DatabaseTargetSchema,
  schema: DatabaseSchemaSchema,
  createdAt: z.string(),
});
export type DatabaseRecord = z.infer<typeof DatabaseRecordSchema>;

/** A target as clients may see it: a connector's token never leaves the catalog. */
export type PublicTarget = { kind: "d1"; binding: string } | { kind: "connector"; url: string };

export function redactTarget(target: DatabaseTarget): PublicTarget {
  return target.kind === "d1" ? { kind: "d1", binding: target.binding } : { kind: "connector", url: target.url };
}

export type SqlRows = { columns: string[]; rows: unknown[][]; truncated: boolean; elapsedMs: number };

/** The read-only guard's refusals (src/core/sql-guard.ts) and the connector backends' failures (src/connector/backend.ts). */
export type SqlExecErrorCode = "sql_error" | "statement_timeout" | "database_unavailable" | "not_read_only" | "multiple_statements" | "empty_statement";
export type SqlExecError = { code: SqlExecErrorCode; message: string };
export type SqlExecResult = { ok: true; value: SqlRows } | { ok: false; error: SqlExecError };
export type DatabaseSchemaResult = { ok: true; value: DatabaseSchema } | { ok: false; error: SqlExecError };
