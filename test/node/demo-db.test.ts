import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import initSqlJs, { type Database, type SqlValue } from "sql.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoDatabase } from "../../scripts/lib/demo-data/generate";
import { DemoQuestionsSchema } from "../../scripts/lib/demo-data/questions-schema";

const root = new URL("../..", import.meta.url);
const sqlText = readFileSync(new URL("data/demo/demo.sql", root), "utf8");
const questions = DemoQuestionsSchema.parse(JSON.parse(readFileSync(new URL("data/demo/questions.json", root), "utf8")));

/** The intended size of each table; a generator change that drifts outside these is a real change. */
const ROW_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  stores: [12, 12],
  employees: [120, 200],
  customers: [1_400, 1_600],
  product_categories: [15, 40],
  suppliers: [10, 30],
  products: [250, 350],
  product_suppliers: [300, 600],
  promotions: [15, 40],
  inventory: [2_000, 4_000],
  orders: [3_500, 4_500],
  order_items: [8_000, 12_000],
  payments: [3_800, 5_000],
  shipments: [1_000, 2_000],
  returns: [300, 1_000],
  reviews: [600, 1_500],
};

let db: Database;

function rows(sql: string): SqlValue[][] {
  return db.exec(sql).flatMap((r) => r.values);
}

function scalar(sql: string): SqlValue {
  return rows(sql)[0]?.[0] ?? null;
}

beforeAll(async () => {
  const SQL = await initSqlJs();
  db = new SQL.Database();
  // D1 enforces foreign keys while the file loads, so the load here does too.
  db.run("PRAGMA foreign_keys = ON");
  db.exec(sqlText);
});

afterAll(() => db.close());

describe("data/demo/demo.sql", () => {
  it("has at least 10 tables, each within its intended row count", () => {
    const tables = rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map((r) => String(r[0]));
    expect(tables.length).toBeGreaterThanOrEqual(10);
    expect([...tables].sort()).toEqual(Object.keys(ROW_RANGES).sort());
    for (const [table, [lo, hi]] of Object.entries(ROW_RANGES)) {
      const n = Number(scalar(`SELECT COUNT(*) FROM ${table}`));
      expect(n, table).toBeGreaterThanOrEqual(lo);
      expect(n, table).toBeLessThanOrEqual(hi);
    }
  });

  it("satisfies every foreign key", () => {
    expect(scalar("PRAGMA foreign_keys")).toBe(1);
    expect(rows("PRAGMA foreign_key_check")).toEqual([]);
  });

  it("is a file D1 accepts: no transactions or pragmas, statements under 100 KB, nothing its splitter mistakes for a block", () => {
    expect(sqlText).not.toMatch(/^\s*(BEGIN|COMMIT|ROLLBACK|PRAGMA)\b/im);
    expect(Buffer.byteLength(sqlText)).toBeLessThan(2_500_000);
    const unquoted = sqlText.replace(/'(?:[^']|'')*'/g, "''");
    // wrangler's splitter treats an unquoted BEGIN or CASE as the start of a compound statement.
    expect(unquoted).not.toMatch(/\s(BEGIN|CASE)\s/i);
    for (const statement of unquoted.split(";")) expect(Buffer.byteLength(statement)).toBeLessThan(100_000);
  });

  it("keeps its books straight: totals add up, cancelled orders never shipped, in-store sales have a store employee", () => {
    expect(scalar("SELECT COUNT(*) FROM orders WHERE ABS(subtotal - discount_amount + shipping_fee - total_amount) > 0.005")).toBe(0);
    expect(scalar(`SELECT COUNT(*) FROM orders o WHERE ABS(o.subtotal - (SELECT SUM(quantity * unit_price) FROM order_items i WHERE i.order_id = o.order_id)) > 0.005`)).toBe(0);
    expect(scalar("SELECT COUNT(*) FROM orders WHERE status = 'cancelled' AND (shipped_at IS NOT NULL OR delivered_at IS NOT NULL)")).toBe(0);
    expect(scalar("SELECT COUNT(*) FROM orders WHERE status = 'cancelled'")).toBeGreaterThan(0);
    expect(scalar("SELECT COUNT(*) FROM orders o JOIN employees e ON e.employee_id = o.employee_id WHERE o.channel = 'in_store' AND e.store_id IS NOT o.store_id")).toBe(0);
    expect(scalar(`SELECT COUNT(*) FROM orders o WHERE o.status IN ('delivered', 'returned') AND ABS(o.total_amount - (SELECT SUM(amount) FROM payments p WHERE p.order_id = o.order_id AND p.status = 'captured')) > 0.005`)).toBe(0);
    expect(rows("SELECT DISTINCT strftime('%Y', order_date) FROM orders ORDER BY 1").map((r) => r[0])).toEqual(["2023", "2024", "2025"]);
  });

  it("has the quirks of real data: hand-typed city names, discontinued products, NULLs", () => {
    expect(Number(scalar("SELECT COUNT(DISTINCT city) FROM customers WHERE LOWER(TRIM(city)) = 'seattle'"))).toBeGreaterThan(1);
    expect(Number(scalar("SELECT COUNT(*) FROM products WHERE is_discontinued = 1"))).toBeGreaterThan(0);
    expect(Number(scalar("SELECT COUNT(*) FROM customers WHERE email IS NULL"))).toBeGreaterThan(0);
    expect(Number(scalar("SELECT COUNT(*) FROM orders WHERE customer_id IS NULL"))).toBeGreaterThan(0);
    expect(Number(scalar("SELECT COUNT(*) FROM employees WHERE manager_id IS NULL"))).toBe(1);
  });
});

describe("data/demo/questions.json", () => {
  it("holds 30 questions with unique ids and every difficulty", () => {
    expect(questions).toHaveLength(30);
    expect(new Set(questions.map((q) => q.id)).size).toBe(30);
    for (const d of ["easy", "medium", "hard"] as const) expect(questions.filter((q) => q.difficulty === d).length).toBeGreaterThanOrEqual(5);
  });

  it("lists exactly the tables each gold SQL reads", () => {
    const known = new Set(Object.keys(ROW_RANGES));
    for (const q of questions) {
      const read = new Set([...q.gold_sql.matchAll(/\b(?:FROM|JOIN)\s+([a-z_]+)/gi)].map((m) => (m[1] ?? "").toLowerCase()).filter((t) => known.has(t)));
      expect([...read].sort(), q.id).toEqual([...q.tables].sort());
    }
  });

  it("answers every question with at least one row, read-only, and no two answers alike", () => {
    db.run("PRAGMA query_only = ON");
    try {
      const answers = new Map<string, string>();
      for (const q of questions) {
        const result = db.exec(q.gold_sql);
        const values = result.flatMap((r) => r.values);
        expect(values.length, q.id).toBeGreaterThanOrEqual(1);
        const key = JSON.stringify(values);
        expect(answers.get(key), `${q.id} repeats another question's answer`).toBeUndefined();
        answers.set(key, q.id);
      }
    } finally {
      db.run("PRAGMA query_only = OFF");
    }
  });
});

describe("scripts/demo-db.ts", () => {
  it("regenerates the checked-in file byte for byte from seed 1, and a different seed changes it", () => {
    const again = generateDemoDatabase(1);
    expect(again.sql === sqlText).toBe(true);
    expect(generateDemoDatabase(1).sql === again.sql).toBe(true);
    expect(generateDemoDatabase(2).sql === again.sql).toBe(false);
    expect(again.tables.reduce((n, t) => n + t.rows, 0)).toBeGreaterThan(20_000);
  }, 60_000);

  it.each([
    [["--seed", "1.5"], /^error: --seed must be/],
    [["--bogus"], /^error: Unknown option '--bogus'/],
  ])("rejects %j with one line and exit code 2", (args, message) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/demo-db.ts", ...args], { cwd: fileURLToPath(root), encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  }, 60_000);
});
