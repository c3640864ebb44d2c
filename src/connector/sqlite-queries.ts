/** What the SQLite worker does with a sql.js database: run one read and read the schema. */
import type { Database } from "sql.js";
import type { DatabaseSchema } from "../core/db-schema";
import { SQLITE_SCHEMA_QUERIES, sqliteSchemaFromRows } from "../core/sqlite-schema";
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

export function readSqliteSchema(db: Database): DatabaseSchema {
  const q = SQLITE_SCHEMA_QUERIES;
  return sqliteSchemaFromRows(selectAll(db, q.tables), selectAll(db, q.columns), selectAll(db, q.foreignKeys));
}
