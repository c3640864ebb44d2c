/**
 * Candidate and revised SQL over the prompt's schema: a SELECT of question-related columns (sometimes DISTINCT or ordered),
 * or, with the given probability, one SQLite rejects (a missing column) or one that returns no rows.
 */
import { quoteIdentifier } from "../../core/db-schema";
import { uniformInt, type Rng } from "../../core/rng";
import type { DdlTable } from "./ddl";
import { matchingColumns, rankTables } from "./words";

export const MISSING_COLUMN = "nosuch_col";
export const IMPOSSIBLE_VALUE = "hexflow-no-such-value";

export function generateSql(tables: readonly DdlTable[], words: Set<string>, errorRate: number, rng: Rng): string {
  const ranked = rankTables(tables, words);
  const best = ranked[0];
  if (best === undefined) return `SELECT ${MISSING_COLUMN} FROM nosuch_table;`;
  const top = ranked.filter((r) => r.score === best.score);
  const table = (top[uniformInt(rng, top.length)] ?? best).table;
  const from = quoteIdentifier(table.name);
  const matched = matchingColumns(table, words);
  const columns = (matched.length > 0 ? matched : [table.columns[uniformInt(rng, table.columns.length)] ?? "*"]).slice(0, 3);
  const select = columns.map((c) => (c === "*" ? c : quoteIdentifier(c))).join(", ");
  const wrong = errorRate > 0 && rng.next() < errorRate;
  // Independent samples of a real model differ in shape as well as in mistakes; so do these.
  if (!wrong) {
    const distinct = rng.next() < 0.3 ? "DISTINCT " : "";
    const order = rng.next() < 0.5 ? ` ORDER BY ${quoteIdentifier(columns[0] ?? table.columns[0] ?? "rowid")}` : "";
    return `SELECT ${distinct}${select} FROM ${from}${order} LIMIT 100;`;
  }
  if (rng.next() < 0.5) return `SELECT ${MISSING_COLUMN} FROM ${from};`;
  const filter = quoteIdentifier(table.columns[0] ?? "rowid");
  return `SELECT ${select} FROM ${from} WHERE ${filter} = '${IMPOSSIBLE_VALUE}';`;
}
