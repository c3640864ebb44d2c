/**
 * Reading the SQL out of a candidate or revise answer. The SQL is only ever taken from what the model
 * wrote, and it passes the read-only guard here so no caller can execute an unchecked statement.
 */
import { STEP } from "../chess";
import type { SqlDialect } from "../sql-dialect";
import { checkReadOnlySql } from "../sql-guard";
import { fencedBlocks, parsed, unparseable, type ParseResult } from "./format";

const STARTS_LIKE_QUERY = /^\(*\s*(select|with|values)\b/i;

/** The SQL text a model meant as its answer, or undefined; see parseSql for the order of preference. */
function sqlText(text: string): string | undefined {
  const blocks = fencedBlocks(text);
  // The last ```sql block: models that draft and then correct themselves put the final query last.
  const tagged = blocks.filter((b) => b.lang === "sql" || b.lang === "sqlite" || b.lang === "postgresql");
  const chosen = tagged.at(-1) ?? blocks.filter((b) => b.lang === "" && STARTS_LIKE_QUERY.test(b.body.trim())).at(-1);
  if (chosen !== undefined) return chosen.body.trim();
  // No fence at all: accept an answer that is nothing but a query; prose mixed with SQL is ambiguous.
  const bare = text.trim();
  return blocks.length === 0 && STARTS_LIKE_QUERY.test(bare) ? bare : undefined;
}

/**
 * The SQL of an answer (text only, no fence), checked read-only for `dialect`. A refused statement is an
 * error value carrying the guard's code and message, so it can be fed back to a revise call verbatim.
 */
export function parseSql(text: string, dialect: SqlDialect = "sqlite", step: string = STEP.candidate): ParseResult<string> {
  const sql = sqlText(text);
  if (sql === undefined || sql === "") return unparseable(step, "no SQL found: expected the query inside a ```sql fenced block");
  const guarded = checkReadOnlySql(sql, dialect);
  if (!guarded.ok) return { ok: false, error: { code: guarded.error.code, message: guarded.error.message } };
  return parsed(guarded.value.statement);
}
