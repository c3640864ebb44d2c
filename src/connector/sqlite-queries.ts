/** What the SQLite worker does with a sql.js database: run one read and read the schema. */
import type { Database } from "sql.js";
import type { Column, DatabaseSchema, Table } from "../core/db-schema";
import type { QueryRows } from "./backend";
import { toJsonValue } from "./json-values";

/** Runs the first statement of `sql` (sql.js never runs the rest) and keeps at most `maxRows` rows. */
export function runSqliteQuery(db: Database, sql: string, maxRows: number): QueryRows {
  const statement = db.prepare(sql);
  try {
    const columns = statement.getColumnNames();
    const rows: unknown[][] = [];
    let truncated = false;
    while (statement.step()) {
      if (rows.length === maxRows) {
        truncated = true;
        break;
      }
      rows.push(statement.get().map(toJsonValue));
    }
    return { columns, rows, truncated };
  } finally {
    statement.free();
  }
}

function selectAll(db: Database, sql: string): Record<string, unknown>[] {
  const statement = db.prepare(sql);
  try {
    const rows: Record<string, unknown>[] = [];
    while (statement.step()) rows.push(statement.getAsObject());
    return rows;
  } finally {
    statement.free();
  }
}

const quoteLiteral = (s: string) => `'${s.replaceAll("'", "''")}'`;
const text = (v: unknown) => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));

/** The primary key column of `table`, which a foreign key without a column list refers to. */
function primaryKeyOf(db: Database, table: string): string | undefined {
  const keys = selectAll(db, `SELECT name FROM pragma_table_info(${quoteLiteral(table)}) WHERE pk > 0 ORDER BY pk`);
  return keys.length === 1 ? text(keys[0]?.name) : undefined;
}

function readTable(db: Database, name: string): Table {
  const references = new Map<string, { table: string; column: string }>();
  for (const fk of selectAll(db, `SELECT "table", "from", "to" FROM pragma_foreign_key_list(${quoteLiteral(name)}) ORDER BY id, seq`)) {
    const table = text(fk.table);
    const column = fk.to === null ? primaryKeyOf(db, table) : text(fk.to);
    if (column !== undefined && !references.has(text(fk.from))) references.set(text(fk.from), { table, column });
  }
  const columns = selectAll(db, `SELECT name, type, "notnull", pk FROM pragma_table_info(${quoteLiteral(name)}) ORDER BY cid`).map((c): Column => {
    const column: Column = {
      name: text(c.name),
      type: text(c.type),
      primaryKey: Number(c.pk) > 0,
      // SQLite lets non-integer primary keys hold NULL, but no schema means them to.
      nullable: Number(c.notnull) === 0 && Number(c.pk) === 0,
    };
    const ref = references.get(column.name);
    if (ref !== undefined) column.references = ref;
    return column;
  });
  return { name, columns };
}

export function readSqliteSchema(db: Database): DatabaseSchema {
  const names = selectAll(db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  return { dialect: "sqlite", tables: names.map((n) => readTable(db, text(n.name))).filter((t) => t.columns.length > 0) };
}
