/**
 * Scoring a text2sql answer against a demo question's gold SQL, both run locally on the demo database
 * (sql.js over data/demo/demo.sql): BIRD's execution accuracy, i.e. the same rows as a multiset (the order
 * only counts when the gold query orders its result).
 */
import { readFileSync } from "node:fs";
import initSqlJs, { type Database } from "sql.js";
import { runSqliteQuery } from "../../src/connector/sqlite-queries";

const DEMO_SQL = new URL("../../data/demo/demo.sql", import.meta.url);
/** More rows than any demo question's gold answer: a longer result cannot match anyway. */
const MAX_ROWS = 20_000;

export async function openDemoDatabase(): Promise<Database> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.exec(readFileSync(DEMO_SQL, "utf8"));
  return db;
}

function rows(db: Database, sql: string): string[] | undefined {
  try {
    return runSqliteQuery(db, sql, MAX_ROWS).rows.map((r) => JSON.stringify(r));
  } catch {
    return undefined;
  }
}

/** Whether `sql` returns the gold query's rows; false when either fails to run. */
export function sameResult(db: Database, sql: string, gold: string): boolean {
  const got = rows(db, sql);
  const want = rows(db, gold);
  if (got === undefined || want === undefined || got.length !== want.length) return false;
  if (/\border\s+by\b/i.test(gold)) return got.every((r, i) => r === want[i]);
  const sorted = (xs: string[]) => [...xs].sort();
  const a = sorted(got);
  const b = sorted(want);
  return a.every((r, i) => r === b[i]);
}
