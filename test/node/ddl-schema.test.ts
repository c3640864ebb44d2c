import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DatabaseRecordSchema, DatabaseTargetSchema, redactTarget } from "../../src/core/database";
import { schemaToDdl } from "../../src/core/db-schema";
import { parseDdl } from "../../src/core/ddl-schema";
import { sqliteSchema } from "../../src/core/sqlite-schema";

const columnsOf = (ddl: string, dialect: "sqlite" | "postgres" = "sqlite") => {
  const r = parseDdl(ddl, dialect);
  if (!r.ok) throw new Error(r.message);
  return r.value.tables;
};

describe("parseDdl", () => {
  it("reads the demo database's script: 15 tables, keys, and skips its inserts", () => {
    const r = parseDdl(readFileSync(new URL("../../data/demo/demo.sql", import.meta.url), "utf8"), "sqlite");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.tables).toHaveLength(15);
    const link = r.value.tables.find((t) => t.name === "product_suppliers");
    expect(link?.columns.filter((c) => c.primaryKey).map((c) => c.name)).toEqual(["product_id", "supplier_id"]);
    expect(link?.columns[0]?.references).toEqual({ table: "products", column: "product_id" });
    // CHECK, DEFAULT and UNIQUE are not part of a column's type.
    expect(r.value.tables.find((t) => t.name === "stores")?.columns.at(-1)).toEqual({ name: "has_service_center", type: "INTEGER", primaryKey: false, nullable: false });
    // Round trip: the DDL the prompts get reads back to the same schema.
    expect(parseDdl(schemaToDdl(r.value), "sqlite")).toEqual(r);
  });

  it("reads table constraints, forward references and multi-word types", () => {
    const tables = columnsOf(`
      CREATE TABLE IF NOT EXISTS public."Order Lines" (
        "order id" integer NOT NULL, line int, amount numeric(10, 2), at timestamp with time zone DEFAULT now(),
        CONSTRAINT pk PRIMARY KEY ("order id", line),
        CONSTRAINT fk FOREIGN KEY ("order id") REFERENCES Orders
      );
      CREATE INDEX ix ON orders (id);
      create temp table ORDERS (ID serial primary key /* (comment) */, Note text);`, "postgres");
    expect(tables.map((t) => t.name)).toEqual(["Order Lines", "orders"]);
    expect(tables[0]?.columns).toEqual([
      { name: "order id", type: "integer", primaryKey: true, nullable: false, references: { table: "orders", column: "id" } },
      { name: "line", type: "int", primaryKey: true, nullable: false },
      { name: "amount", type: "numeric(10, 2)", primaryKey: false, nullable: true },
      { name: "at", type: "timestamp with time zone", primaryKey: false, nullable: true },
    ]);
    expect(tables[1]?.columns.map((c) => c.name)).toEqual(["id", "note"]);
  });

  it("keeps SQLite's names as written and accepts keyword-like column names", () => {
    const tables = columnsOf("CREATE TABLE T (Id INTEGER PRIMARY KEY, check TEXT, [key] TEXT, `value` BLOB, CHECK (Id > 0), UNIQUE (check))");
    expect(tables[0]?.columns.map((c) => [c.name, c.type])).toEqual([["Id", "INTEGER"], ["check", "TEXT"], ["key", "TEXT"], ["value", "BLOB"]]);
  });

  it.each([
    ["", /no CREATE TABLE/],
    ["CREATE INDEX i ON t (a)", /no CREATE TABLE/],
    ["CREATE TABLE t AS SELECT 1", /column list/],
    ["CREATE TABLE t (", /table t: expected a column name/],
    ["CREATE TABLE t (a int", /not closed/],
    ["CREATE TABLE t ()", /expected a column name/],
    ["CREATE TABLE t (a int, A text)", /defined twice/],
    ["CREATE TABLE t (a int); CREATE TABLE t (b int)", /table t is defined twice/],
    ["CREATE TABLE t (a int, PRIMARY KEY (b))", /column b/],
    ["CREATE TABLE t (a text DEFAULT 'x)", /unterminated string/],
  ])("refuses %j", (ddl, message) => {
    const r = parseDdl(ddl, "sqlite");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});

describe("sqliteSchema", () => {
  it("builds tables from pragma rows, resolving a reference without a column to the parent's key", () => {
    const schema = sqliteSchema(
      ["child", "parent", "empty"],
      [
        { table: "parent", name: "pid", type: "TEXT", notnull: 0, pk: 1 },
        { table: "child", name: "id", type: "INTEGER", notnull: 0, pk: 1 },
        { table: "child", name: "parent_id", type: "", notnull: 1, pk: 0 },
      ],
      [{ table: "child", parent: "parent", from: "parent_id", to: null }],
    );
    expect(schema).toEqual({
      dialect: "sqlite",
      tables: [
        { name: "child", columns: [{ name: "id", type: "INTEGER", primaryKey: true, nullable: false }, { name: "parent_id", type: "", primaryKey: false, nullable: false, references: { table: "parent", column: "pid" } }] },
        { name: "parent", columns: [{ name: "pid", type: "TEXT", primaryKey: true, nullable: false }] },
      ],
    });
  });
});

describe("database records", () => {
  it("validates names and targets and redacts tokens", () => {
    const connector = DatabaseTargetSchema.parse({ kind: "connector", url: "https://db.example", token: "t".repeat(16) });
    expect(redactTarget(connector)).toEqual({ kind: "connector", url: "https://db.example" });
    expect(DatabaseTargetSchema.safeParse({ kind: "connector", url: "file:///etc/passwd", token: "t".repeat(16) }).success).toBe(false);
    expect(DatabaseTargetSchema.safeParse({ kind: "d1", binding: "DEMO_DB", extra: 1 }).success).toBe(false);
    const record = { name: "a_b-1", target: { kind: "d1", binding: "DEMO_DB" }, schema: { dialect: "sqlite", tables: [] }, createdAt: "now" };
    expect(DatabaseRecordSchema.safeParse(record).success).toBe(true);
    for (const name of ["", "-a", "A", "a".repeat(64), "a b"]) expect(DatabaseRecordSchema.safeParse({ ...record, name }).success).toBe(false);
  });
});
