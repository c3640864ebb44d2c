/**
 * A registered database's schema as the system passes it around: read from the database by the
 * connector, stored with the registration, and rendered as CREATE TABLE text for Text-to-SQL prompts.
 */
import { z } from "zod";
import { SqlDialectSchema } from "./sql-dialect";
import { REFUSED_KEYWORDS } from "./sql-guard";

const NameSchema = z.string().min(1).max(256);

export const ColumnSchema = z.object({
  name: NameSchema,
  /** The declared type as the database reports it; SQLite columns may have none (""). */
  type: z.string().max(256),
  primaryKey: z.boolean(),
  nullable: z.boolean(),
  references: z.object({ table: NameSchema, column: NameSchema }).optional(),
});
export type Column = z.infer<typeof ColumnSchema>;

export const TableSchema = z.object({
  name: NameSchema,
  columns: z.array(ColumnSchema).min(1),
});
export type Table = z.infer<typeof TableSchema>;

export const DatabaseSchemaSchema = z.object({
  dialect: SqlDialectSchema,
  tables: z.array(TableSchema),
});
export type DatabaseSchema = z.infer<typeof DatabaseSchemaSchema>;

// Words a model would otherwise write bare and see fail (or refused by the guard), so the DDL shows them quoted.
const RESERVED = new Set([
  ...REFUSED_KEYWORDS,
  "ALL", "AND", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "CHECK", "COLUMN", "CONSTRAINT", "CROSS",
  "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "DEFAULT", "DESC", "DISTINCT", "ELSE",
  "END", "EXCEPT", "EXISTS", "FALSE", "FETCH", "FOR", "FOREIGN", "FROM", "FULL", "GROUP", "HAVING", "IN", "INDEX",
  "INNER", "INTERSECT", "IS", "JOIN", "KEY", "LEFT", "LIKE", "LIMIT", "NATURAL", "NOT", "NULL", "OFFSET", "ON",
  "OR", "ORDER", "OUTER", "PRIMARY", "REFERENCES", "RIGHT", "ROW", "SELECT", "TABLE", "THEN", "TO", "TRUE",
  "UNION", "UNIQUE", "USER", "USING", "VALUES", "WHEN", "WHERE", "WINDOW", "WITH",
]);

/** A name as SQL should spell it: bare when it is a plain lower-case word, else double-quoted. */
export function quoteIdentifier(name: string): string {
  const bare = /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED.has(name.toUpperCase());
  return bare ? name : `"${name.replaceAll('"', '""')}"`;
}

// Types come from the database; a newline or a comment opener would let one column's text bend the prompt.
const typeText = (type: string) => type.replace(/[\r\n]+/g, " ").replaceAll("--", "- -").replaceAll("/*", "/ *").trim();

function columnLine(column: Column, inlinePrimaryKey: boolean): string {
  const parts = [quoteIdentifier(column.name)];
  const type = typeText(column.type);
  if (type !== "") parts.push(type);
  if (inlinePrimaryKey) parts.push("PRIMARY KEY");
  else if (!column.nullable) parts.push("NOT NULL");
  if (column.references !== undefined) {
    parts.push(`REFERENCES ${quoteIdentifier(column.references.table)}(${quoteIdentifier(column.references.column)})`);
  }
  return parts.join(" ");
}

function tableDdl(table: Table): string {
  const keys = table.columns.filter((c) => c.primaryKey);
  const single = keys.length === 1;
  const lines = table.columns.map((c) => columnLine(c, single && c.primaryKey));
  if (keys.length > 1) lines.push(`PRIMARY KEY (${keys.map((c) => quoteIdentifier(c.name)).join(", ")})`);
  return `CREATE TABLE ${quoteIdentifier(table.name)} (\n${lines.map((l) => `  ${l}`).join(",\n")}\n);`;
}

/** CREATE TABLE text for a prompt, tables in the order given; the same schema always gives the same text. */
export function schemaToDdl(schema: DatabaseSchema): string {
  return schema.tables.map(tableDdl).join("\n\n");
}
