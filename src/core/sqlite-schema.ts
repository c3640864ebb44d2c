/**
 * A SQLite database's schema from what its pragmas report (`table_info`, `foreign_key_list`), for any
 * driver that can run the queries: D1 in the Worker, sql.js in the connector.
 */
import type { Column, DatabaseSchema, Table } from "./db-schema";

export interface PragmaColumn {
  table: string;
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

export interface PragmaForeignKey {
  table: string;
  /** The referenced table. */
  parent: string;
  from: string;
  /** Null when the reference names no column: then it means the parent's primary key. */
  to: string | null;
}

const USER_TABLES = String.raw`m.name NOT LIKE 'sqlite\_%' ESCAPE '\' AND m.name NOT LIKE '\_cf\_%' ESCAPE '\'`;

/**
 * The three reads behind a schema, one statement each whatever the number of tables (D1 counts
 * statements per invocation). Their rows, as named here, are what sqliteSchema takes.
 */
export const SQLITE_SCHEMA_QUERIES = {
  tables: `SELECT m.name FROM sqlite_master m WHERE m.type IN ('table', 'view') AND ${USER_TABLES} ORDER BY m.name`,
  columns: `SELECT m.name AS "table", p.name, p.type, p."notnull", p.pk FROM sqlite_master m JOIN pragma_table_info(m.name) p
    WHERE m.type IN ('table', 'view') AND ${USER_TABLES} ORDER BY m.name, p.cid`,
  foreignKeys: `SELECT m.name AS "table", f."table" AS parent, f."from", f."to" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' AND ${USER_TABLES} ORDER BY m.name, f.id, f.seq`,
} as const;

const text = (v: unknown) => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));

/** The rows of SQLITE_SCHEMA_QUERIES, however the driver returned them, as the schema they describe. */
export function sqliteSchemaFromRows(tables: readonly Record<string, unknown>[], columns: readonly Record<string, unknown>[], foreignKeys: readonly Record<string, unknown>[]): DatabaseSchema {
  return sqliteSchema(
    tables.map((r) => text(r.name)).filter((n) => !isInternalSqliteTable(n)),
    columns.map((r) => ({ table: text(r.table), name: text(r.name), type: text(r.type), notnull: Number(r.notnull), pk: Number(r.pk) })),
    foreignKeys.map((r) => ({ table: text(r.table), parent: text(r.parent), from: text(r.from), to: r.to === null || r.to === undefined ? null : text(r.to) })),
  );
}

/** Tables SQLite and the Workers runtime keep for themselves. */
export function isInternalSqliteTable(name: string): boolean {
  return name.startsWith("sqlite_") || name.startsWith("_cf_");
}

/** Tables in the order of `names`, columns in the order given (cid); tables without columns are dropped. */
export function sqliteSchema(names: readonly string[], columns: readonly PragmaColumn[], foreignKeys: readonly PragmaForeignKey[]): DatabaseSchema {
  const byTable = new Map<string, PragmaColumn[]>(names.map((n) => [n, []]));
  for (const c of columns) byTable.get(c.table)?.push(c);
  const keyOf = (table: string) => {
    const keys = (byTable.get(table) ?? []).filter((c) => c.pk > 0);
    return keys.length === 1 ? keys[0]?.name : undefined;
  };
  const tables = names.map((name): Table => {
    const references = new Map<string, { table: string; column: string }>();
    for (const fk of foreignKeys) {
      if (fk.table !== name || references.has(fk.from)) continue;
      const column = fk.to ?? keyOf(fk.parent);
      if (column !== undefined) references.set(fk.from, { table: fk.parent, column });
    }
    return {
      name,
      columns: (byTable.get(name) ?? []).map((c): Column => {
        // SQLite lets non-integer primary keys hold NULL, but no schema means them to.
        const column: Column = { name: c.name, type: c.type, primaryKey: c.pk > 0, nullable: c.notnull === 0 && c.pk === 0 };
        const ref = references.get(c.name);
        if (ref !== undefined) column.references = ref;
        return column;
      }),
    };
  });
  return { dialect: "sqlite", tables: tables.filter((t) => t.columns.length > 0) };
}
