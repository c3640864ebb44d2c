/**
 * Renders table specs and rows as SQLite text that Cloudflare D1 accepts from `wrangler d1 execute --file`:
 * plain CREATE TABLE and multi-row INSERT statements, no transactions or pragmas (D1 wraps the file in its
 * own transaction and enforces foreign keys, so tables and rows must come in dependency order).
 */

export type SqlValue = string | number | null;
export type Row = Readonly<Record<string, SqlValue>>;

export interface ColumnSpec {
  name: string;
  /** SQLite type and column constraints, e.g. `INTEGER NOT NULL REFERENCES stores(store_id)`. */
  type: string;
}

export interface TableSpec {
  name: string;
  columns: readonly ColumnSpec[];
  /** Table-level constraints such as composite primary keys. */
  constraints?: readonly string[];
  /** Secondary indexes, each a column list such as `customer_id` or `store_id, order_date`. */
  indexes?: readonly string[];
}

export interface TableData {
  spec: TableSpec;
  rows: readonly Row[];
}

/** D1 rejects statements above 100 KB; staying well below leaves room for long text rows. */
const MAX_ROWS_PER_INSERT = 100;
const MAX_BYTES_PER_INSERT = 60_000;

export function createTableSql(spec: TableSpec): string {
  const lines = [...spec.columns.map((c) => `  ${c.name} ${c.type}`), ...(spec.constraints ?? []).map((c) => `  ${c}`)];
  return `CREATE TABLE ${spec.name} (\n${lines.join(",\n")}\n);\n`;
}

export function createIndexSql(spec: TableSpec): string {
  return (spec.indexes ?? []).map((cols) => `CREATE INDEX idx_${spec.name}_${cols.replace(/\W+/g, "_")} ON ${spec.name} (${cols});\n`).join("");
}

export function sqlLiteral(value: SqlValue): string {
  if (value === null) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`non-finite number in demo data: ${value}`);
    return String(value);
  }
  return `'${value.replaceAll("'", "''")}'`;
}

function rowTuple(spec: TableSpec, row: Row): string {
  const values = spec.columns.map((c) => {
    const v = row[c.name];
    if (v === undefined) throw new Error(`${spec.name}: row has no value for column ${c.name}`);
    return sqlLiteral(v);
  });
  return `(${values.join(",")})`;
}

export function insertSql(table: TableData): string {
  const header = `INSERT INTO ${table.spec.name} (${table.spec.columns.map((c) => c.name).join(", ")}) VALUES\n`;
  const statements: string[] = [];
  let batch: string[] = [];
  let bytes = header.length;
  const flush = (): void => {
    if (batch.length > 0) statements.push(`${header}${batch.join(",\n")};\n`);
    batch = [];
    bytes = header.length;
  };
  for (const row of table.rows) {
    const tuple = rowTuple(table.spec, row);
    if (batch.length >= MAX_ROWS_PER_INSERT || bytes + tuple.length + 2 > MAX_BYTES_PER_INSERT) flush();
    batch.push(tuple);
    bytes += tuple.length + 2;
  }
  flush();
  return statements.join("");
}

/** Money is kept in integer cents while generating, so totals add up exactly; the file holds dollars. */
export function dollars(cents: number): number {
  return Math.round(cents) / 100;
}
