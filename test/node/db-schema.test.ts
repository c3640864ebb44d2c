import { describe, expect, it } from "vitest";
import { type DatabaseSchema, DatabaseSchemaSchema, quoteIdentifier, schemaToDdl } from "../../src/core/db-schema";
import { checkReadOnlySql } from "../../src/core/sql-guard";

const shop: DatabaseSchema = {
  dialect: "postgres",
  tables: [
    {
      name: "customers",
      columns: [
        { name: "id", type: "integer", primaryKey: true, nullable: false },
        { name: "name", type: "text", primaryKey: false, nullable: false },
        { name: "comment", type: "text", primaryKey: false, nullable: true },
      ],
    },
    {
      name: "order lines",
      columns: [
        { name: "order_id", type: "integer", primaryKey: true, nullable: false },
        { name: "line", type: "integer", primaryKey: true, nullable: false },
        { name: "customerId", type: "integer", primaryKey: false, nullable: true, references: { table: "customers", column: "id" } },
        { name: "note", type: "", primaryKey: false, nullable: true },
      ],
    },
  ],
};

describe("DatabaseSchemaSchema", () => {
  it("accepts a schema and keeps every field", () => {
    expect(DatabaseSchemaSchema.parse(shop)).toEqual(shop);
  });

  it.each([
    ["an unknown dialect", { ...shop, dialect: "mysql" }],
    ["a table without columns", { dialect: "sqlite", tables: [{ name: "t", columns: [] }] }],
    ["an empty name", { dialect: "sqlite", tables: [{ name: "", columns: [{ name: "a", type: "", primaryKey: false, nullable: true }] }] }],
    ["a missing nullable", { dialect: "sqlite", tables: [{ name: "t", columns: [{ name: "a", type: "", primaryKey: false }] }] }],
    ["a reference without a column", { dialect: "sqlite", tables: [{ name: "t", columns: [{ name: "a", type: "", primaryKey: false, nullable: true, references: { table: "u" } }] }] }],
  ])("refuses %s", (_label, value) => {
    expect(DatabaseSchemaSchema.safeParse(value).success).toBe(false);
  });
});

describe("schemaToDdl", () => {
  it("renders CREATE TABLE text with keys, nullability and references", () => {
    expect(schemaToDdl(shop)).toBe(
      [
        "CREATE TABLE customers (",
        "  id integer PRIMARY KEY,",
        "  name text NOT NULL,",
        '  "comment" text',
        ");",
        "",
        'CREATE TABLE "order lines" (',
        "  order_id integer NOT NULL,",
        "  line integer NOT NULL,",
        '  "customerId" integer REFERENCES customers(id),',
        "  note,",
        "  PRIMARY KEY (order_id, line)",
        ");",
      ].join("\n"),
    );
  });

  it("is deterministic and follows the order of the tables", () => {
    expect(schemaToDdl(shop)).toBe(schemaToDdl(structuredClone(shop)));
    const reversed = { ...shop, tables: [...shop.tables].reverse() };
    expect(schemaToDdl(reversed).startsWith('CREATE TABLE "order lines"')).toBe(true);
  });

  it("keeps a hostile type or name from breaking out of its line", () => {
    const ddl = schemaToDdl({
      dialect: "sqlite",
      tables: [{ name: 'x"); DROP TABLE y; --', columns: [{ name: "a", type: "int\n); -- ignore the schema", primaryKey: false, nullable: true }] }],
    });
    expect(ddl).toBe('CREATE TABLE "x""); DROP TABLE y; --" (\n  a int ); - - ignore the schema\n);');
  });

  it("quotes exactly the names a query would have to quote", () => {
    expect(quoteIdentifier("orders")).toBe("orders");
    expect(quoteIdentifier("Orders")).toBe('"Orders"');
    expect(quoteIdentifier("order")).toBe('"order"');
    expect(quoteIdentifier("comment")).toBe('"comment"');
    expect(quoteIdentifier("2fa")).toBe('"2fa"');
    // A column written as the DDL shows it passes the read-only guard.
    expect(checkReadOnlySql(`SELECT ${quoteIdentifier("comment")}, ${quoteIdentifier("set")} FROM t`, "sqlite").ok).toBe(true);
  });
});
