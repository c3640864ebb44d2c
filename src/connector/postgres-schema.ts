/**
 * A Postgres schema as DatabaseSchema, from information_schema (which shows only what the
 * connector's role may see, which is what its queries can use).
 */
import { z } from "zod";
import type { Column, DatabaseSchema } from "../core/db-schema";

/** Runs one parameterised statement inside the connector's read-only transaction. */
export type RunSql = (text: string, values: string[]) => Promise<unknown[]>;

const ColumnRowSchema = z.object({
  table_name: z.string(),
  column_name: z.string(),
  data_type: z.string(),
  udt_name: z.string(),
  character_maximum_length: z.number().nullable(),
  numeric_precision: z.number().nullable(),
  numeric_scale: z.number().nullable(),
  is_nullable: z.string(),
});
type ColumnRow = z.infer<typeof ColumnRowSchema>;

const KeyRowSchema = z.object({ table_name: z.string(), column_name: z.string() });
const ReferenceRowSchema = KeyRowSchema.extend({ ref_table: z.string(), ref_column: z.string() });

const COLUMNS = `
  SELECT c.table_name::text, c.column_name::text, c.data_type::text, c.udt_name::text,
         c.character_maximum_length::int, c.numeric_precision::int, c.numeric_scale::int, c.is_nullable::text
  FROM information_schema.columns c
  JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
  WHERE c.table_schema = $1 AND t.table_type IN ('BASE TABLE', 'VIEW', 'FOREIGN')
  ORDER BY c.table_name COLLATE "C", c.ordinal_position`;

const PRIMARY_KEYS = `
  SELECT k.table_name::text, k.column_name::text
  FROM information_schema.table_constraints tc
  JOIN information_schema.key_column_usage k
    ON k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name
  WHERE tc.table_schema = $1 AND tc.constraint_type = 'PRIMARY KEY'`;

// Pairs each referencing column with the referenced one by position, so composite keys map column to column.
const REFERENCES = `
  SELECT k.table_name::text, k.column_name::text, r.table_name::text AS ref_table, r.column_name::text AS ref_column
  FROM information_schema.table_constraints tc
  JOIN information_schema.referential_constraints rc
    ON rc.constraint_schema = tc.constraint_schema AND rc.constraint_name = tc.constraint_name
  JOIN information_schema.key_column_usage k
    ON k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name
  JOIN information_schema.key_column_usage r
    ON r.constraint_schema = rc.unique_constraint_schema AND r.constraint_name = rc.unique_constraint_name
   AND r.ordinal_position = k.position_in_unique_constraint
  WHERE tc.table_schema = $1 AND tc.constraint_type = 'FOREIGN KEY'
  ORDER BY k.table_name COLLATE "C", tc.constraint_name COLLATE "C", k.ordinal_position`;

function typeOf(c: ColumnRow): string {
  if (c.data_type === "USER-DEFINED") return c.udt_name;
  if (c.data_type === "ARRAY") return `${c.udt_name.replace(/^_/, "")}[]`;
  if (c.character_maximum_length !== null) return `${c.data_type}(${c.character_maximum_length})`;
  if (c.data_type === "numeric" && c.numeric_precision !== null) return `numeric(${c.numeric_precision},${c.numeric_scale ?? 0})`;
  return c.data_type;
}

const key = (table: string, column: string) => JSON.stringify([table, column]);

export async function readPostgresSchema(run: RunSql, schema: string): Promise<DatabaseSchema> {
  const columns = z.array(ColumnRowSchema).parse(await run(COLUMNS, [schema]));
  const primary = new Set(z.array(KeyRowSchema).parse(await run(PRIMARY_KEYS, [schema])).map((r) => key(r.table_name, r.column_name)));
  const references = new Map<string, { table: string; column: string }>();
  for (const r of z.array(ReferenceRowSchema).parse(await run(REFERENCES, [schema]))) {
    const k = key(r.table_name, r.column_name);
    if (!references.has(k)) references.set(k, { table: r.ref_table, column: r.ref_column });
  }
  const tables = new Map<string, Column[]>();
  for (const c of columns) {
    const k = key(c.table_name, c.column_name);
    const column: Column = { name: c.column_name, type: typeOf(c), primaryKey: primary.has(k), nullable: c.is_nullable === "YES" };
    const ref = references.get(k);
    if (ref !== undefined) column.references = ref;
    const list = tables.get(c.table_name) ?? [];
    list.push(column);
    tables.set(c.table_name, list);
  }
  return { dialect: "postgres", tables: [...tables].map(([name, cols]) => ({ name, columns: cols })) };
}
