import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import { DatabaseNameSchema, DatabaseTargetSchema, redactTarget, type DatabaseRecord } from "../core/database";
import { type DatabaseSchema, schemaToDdl } from "../core/db-schema";
import { parseDdl } from "../core/ddl-schema";
import { LIMITS } from "../core/limits";
import { SqlDialectSchema } from "../core/sql-dialect";
import { d1Binding, readSchema } from "../db/execute";
import type { TenantEnv } from "./auth";
import { errorBody } from "./errors";
import { failure } from "./results";
import { issueMessage } from "./json-body";

/** Bounds on what one registration stores and every Text-to-SQL prompt over it carries (the body's size: app.ts). */
const { maxTables: MAX_TABLES, maxSchemaBytes: MAX_SCHEMA_BYTES } = LIMITS.databases;
const KIB = MAX_SCHEMA_BYTES / 1024;

export const RegisterDatabaseSchema = z.strictObject({
  name: DatabaseNameSchema,
  target: DatabaseTargetSchema,
  /** CREATE TABLE statements to take the schema from instead of reading it from the database. */
  ddl: z.string().optional(),
  /** The DDL's dialect: always sqlite for D1; a connector's own dialect when its schema is read. */
  dialect: SqlDialectSchema.optional(),
});

const bytes = (s: string) => new TextEncoder().encode(s).byteLength;


const catalog = (c: Context<TenantEnv>) => c.env.CATALOG.getByName(c.get("tenant").id);

/** What clients see of a registration: never the connector's token. */
function summary(record: DatabaseRecord) {
  return { name: record.name, target: redactTarget(record.target), dialect: record.schema.dialect, tableCount: record.schema.tables.length, createdAt: record.createdAt };
}

const detail = (record: DatabaseRecord) => ({ ...summary(record), tables: record.schema.tables });

function tooLarge(schema: DatabaseSchema): string | undefined {
  if (schema.tables.length > MAX_TABLES) return `the schema has ${schema.tables.length} tables; at most ${MAX_TABLES} can be registered`;
  const size = bytes(schemaToDdl(schema));
  return size > MAX_SCHEMA_BYTES ? `the schema's DDL is ${size} bytes; at most ${KIB} KiB (${MAX_SCHEMA_BYTES} bytes) can be registered` : undefined;
}

/**
 * Databases registered for Text-to-SQL (one catalog per tenant). The schema comes from the DDL in the
 * request or is read from the database itself; registration is create-only.
 */
export const databases = new Hono<TenantEnv>()
  .post("/", async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json(errorBody("invalid_request", "the body is not valid JSON"), 400);
    }
    const parsed = RegisterDatabaseSchema.safeParse(raw);
    if (!parsed.success) return c.json(errorBody("invalid_request", issueMessage(parsed.error)), 400);
    const { name, target, ddl, dialect } = parsed.data;
    if (target.kind === "d1" && dialect !== undefined && dialect !== "sqlite") return c.json(errorBody("invalid_request", "a D1 database speaks sqlite"), 400);
    if (target.kind === "d1" && d1Binding(c.env, target.binding) === undefined) {
      return c.json(errorBody("invalid_request", `target.binding: no D1 binding ${target.binding} is open to queries (QUERYABLE_D1 lists them)`), 400);
    }
    if ((await catalog(c).get(name)).ok) return c.json(errorBody("conflict", `database ${name} is already registered; delete it first to change it`), 409);

    let schema: DatabaseSchema;
    if (ddl !== undefined) {
      if (bytes(ddl) > MAX_SCHEMA_BYTES) return c.json(errorBody("schema_too_large", `the DDL may have at most ${KIB} KiB (${MAX_SCHEMA_BYTES} bytes)`), 400);
      const read = parseDdl(ddl, dialect ?? "sqlite");
      if (!read.ok) return c.json(errorBody("invalid_ddl", read.message), 400);
      schema = read.value;
    } else {
      const read = await readSchema(c.env, target);
      if (!read.ok) return c.json(errorBody("database_unavailable", read.error.message), 502);
      if (dialect !== undefined && dialect !== read.value.dialect) return c.json(errorBody("invalid_request", `the database speaks ${read.value.dialect}, not ${dialect}`), 400);
      if (read.value.tables.length === 0) return c.json(errorBody("empty_schema", "the database has no tables to query"), 422);
      schema = read.value;
    }
    const large = tooLarge(schema);
    if (large !== undefined) return c.json(errorBody("schema_too_large", large), 400);

    const r = await catalog(c).put({ name, target, schema, createdAt: new Date().toISOString() });
    return r.ok ? c.json(detail(r.value), 201) : failure(c, r.error);
  })
  .get("/", async (c) => c.json({ databases: (await catalog(c).list()).map(summary) }))
  .get("/:name", async (c) => {
    const name = c.req.param("name");
    if (!DatabaseNameSchema.safeParse(name).success) return c.json(errorBody("not_found", `no database ${name}`), 404);
    const r = await catalog(c).get(name);
    return r.ok ? c.json(detail(r.value)) : failure(c, r.error);
  })
  .delete("/:name", async (c) => {
    const name = c.req.param("name");
    if (!DatabaseNameSchema.safeParse(name).success) return c.json(errorBody("not_found", `no database ${name}`), 404);
    const r = await catalog(c).remove(name);
    return r.ok ? c.json({ name: r.value.name, deleted: true }) : failure(c, r.error);
  });
