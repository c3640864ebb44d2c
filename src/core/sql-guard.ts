/**
 * The read-only guard: the SQL an LLM wrote runs only if it is one SELECT, WITH or VALUES statement
 * with no write, DDL, transaction, session or file-touching construct anywhere in it. It errs on the
 * side of refusing: a refused read can be rephrased, an accepted write cannot be undone. Databases
 * enforce read-only access on top of this (see src/connector), so it is one layer, not the only one.
 */
import type { SqlDialect } from "./sql-dialect";
import { type SqlToken, tokenizeSql } from "./sql-tokens";

export type SqlGuardErrorCode = "empty_statement" | "multiple_statements" | "not_read_only";

export type SqlGuardResult =
  | { ok: true; value: { statement: string } }
  | { ok: false; error: { code: SqlGuardErrorCode; message: string } };

const ALLOWED_FIRST = new Set(["SELECT", "WITH", "VALUES"]);

/** Keywords that make a statement write, change the schema, the transaction or the session, or run code. */
export const REFUSED_KEYWORDS: ReadonlySet<string> = new Set([
  "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "MERGE",
  "CREATE", "DROP", "ALTER", "TRUNCATE", "ATTACH", "DETACH",
  "PRAGMA", "VACUUM", "REINDEX", "ANALYZE",
  "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE",
  "GRANT", "REVOKE", "COPY", "CALL", "DO", "LOCK",
  "SET", "RESET", "LISTEN", "NOTIFY", "PREPARE", "EXECUTE", "DEALLOCATE",
  "REFRESH", "CLUSTER", "COMMENT", "SECURITY",
  // SELECT ... INTO creates a table in Postgres.
  "INTO",
]);

/** Functions that read or write server files, load code, signal backends, reach other servers or change settings. */
export const REFUSED_FUNCTIONS: ReadonlySet<string> = new Set([
  "load_extension", "readfile", "writefile", "fts3_tokenizer",
  "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_sleep",
  "lo_import", "lo_export", "lo_unlink", "dblink", "dblink_exec",
  "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "set_config", "nextval", "setval",
]);

/** Refused keywords that are also common column names: the message tells the model how to write them. */
const NOUN_LIKE = new Set(["COMMENT", "SECURITY", "LOCK", "RELEASE", "CLUSTER", "REFRESH", "ANALYZE", "SET"]);

const refuse = (code: SqlGuardErrorCode, message: string): SqlGuardResult => ({ ok: false, error: { code, message } });

const isPunct = (t: SqlToken | undefined, text: string) => t !== undefined && t.kind === "punct" && t.text === text;

/** The keyword a token is to the database, or undefined when it is a name or a value. */
function keywordOf(tokens: readonly SqlToken[], i: number): string | undefined {
  const t = tokens[i];
  if (t === undefined || t.kind !== "word") return undefined;
  // Next to a dot a word is part of a qualified name (`p.comment`, `comment.id`), never a keyword.
  if (isPunct(tokens[i - 1], ".") || isPunct(tokens[i + 1], ".")) return undefined;
  return t.text.toUpperCase();
}

/** The function or object name a token could call: words and quoted identifiers (SQLite calls `"readfile"(...)` too). */
function nameOf(t: SqlToken): string | undefined {
  if (t.kind === "word") return t.text.toLowerCase();
  if (t.kind === "quoted") return t.name?.toLowerCase();
  return undefined;
}

function refusedConstruct(tokens: readonly SqlToken[]): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === undefined) continue;
    const keyword = keywordOf(tokens, i);
    // replace(x, 'a', 'b') is a string function in both dialects; the REPLACE statement is never followed by "(".
    if (keyword !== undefined && REFUSED_KEYWORDS.has(keyword) && !(keyword === "REPLACE" && isPunct(tokens[i + 1], "("))) {
      const hint = NOUN_LIKE.has(keyword) ? ` (quote it if it names a column: "${t.text}")` : "";
      return `only SELECT/WITH queries may run; found ${keyword}${hint}`;
    }
    const name = nameOf(t);
    if (name !== undefined && REFUSED_FUNCTIONS.has(name)) return `${name} touches files, sessions or the server and may not run`;
  }
  return undefined;
}

/** Non-empty runs of tokens between semicolons: `SELECT 1;;` is one statement. */
function splitStatements(tokens: readonly SqlToken[]): SqlToken[][] {
  const statements: SqlToken[][] = [[]];
  for (const t of tokens) {
    if (isPunct(t, ";")) statements.push([]);
    else statements.at(-1)?.push(t);
  }
  return statements.filter((s) => s.length > 0);
}

export function checkReadOnlySql(sql: string, dialect: SqlDialect): SqlGuardResult {
  const lexed = tokenizeSql(sql, dialect);
  if (!lexed.ok) return refuse("not_read_only", `cannot be checked: ${lexed.message}`);
  const tokens = lexed.tokens;

  const statements = splitStatements(tokens);
  if (statements.length > 1) {
    const next = statements[1]?.[0]?.text ?? "";
    return refuse("multiple_statements", `only one statement may run; found ${statements.length} (the second starts with ${next})`);
  }
  const body = statements[0] ?? [];
  const first = body[0];
  const last = body.at(-1);
  if (first === undefined || last === undefined) return refuse("empty_statement", "the SQL contains no statement");

  let lead = 0;
  while (isPunct(body[lead], "(")) lead++;
  const opening = keywordOf(body, lead);
  if (opening === undefined || !ALLOWED_FIRST.has(opening)) {
    return refuse("not_read_only", `only SELECT/WITH queries may run; found ${opening ?? body[lead]?.text ?? "nothing"}`);
  }

  const refused = refusedConstruct(body);
  if (refused !== undefined) return refuse("not_read_only", refused);
  return { ok: true, value: { statement: sql.slice(first.start, last.end) } };
}
