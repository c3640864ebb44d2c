/**
 * A SQL tokenizer just precise enough to decide what a database would see as keywords and statement
 * boundaries. It follows each dialect's own lexer where they differ (SQLite's `[ident]`, backticks and
 * `$name(...)` variables; PostgreSQL's dollar quotes, E'' strings and nested comments), because a string
 * or comment that ends somewhere else than the database thinks is how a write slips past a guard.
 * Comments and whitespace produce no tokens.
 */
import type { SqlDialect } from "./sql-dialect";

export type SqlTokenKind =
  | "word" // an unquoted identifier or keyword
  | "quoted" // a quoted identifier: "x", `x`, [x]
  | "string"
  | "number"
  | "param" // ?, ?1, :name, @name, $name, $1
  | "punct";

export interface SqlToken {
  kind: SqlTokenKind;
  /** Source text of the token. */
  text: string;
  /** Offsets into the input: [start, end). */
  start: number;
  end: number;
  /** The identifier a `quoted` token names, without quotes and escapes. */
  name?: string;
}

export type TokenizeResult = { ok: true; tokens: SqlToken[] } | { ok: false; message: string };

const isDigit = (c: string) => c >= "0" && c <= "9";
const isAsciiLetter = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");
// Both lexers treat every byte >= 0x80 as an identifier character (non-ASCII letters, but also U+00A0).
const isIdentStart = (c: string) => isAsciiLetter(c) || c === "_" || c.charCodeAt(0) >= 0x80;
const isIdentChar = (c: string) => isIdentStart(c) || isDigit(c) || c === "$";
// Postgres also counts \v as whitespace; SQLite does not, and there it is an illegal character.
const isSpace = (c: string, dialect: SqlDialect) =>
  c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || (dialect === "postgres" && c === "\v");

class Scanner {
  readonly tokens: SqlToken[] = [];
  pos = 0;

  constructor(
    readonly src: string,
    readonly dialect: SqlDialect,
  ) {}

  at(offset = 0): string {
    return this.src.charAt(this.pos + offset);
  }

  push(kind: SqlTokenKind, start: number, name?: string): void {
    const token: SqlToken = { kind, text: this.src.slice(start, this.pos), start, end: this.pos };
    if (name !== undefined) token.name = name;
    this.tokens.push(token);
  }

  /** Reads a quoted run closed by `close`, where a doubled `close` is an escaped one. */
  quoted(close: string, backslashEscapes: boolean): string | undefined {
    let value = "";
    this.pos++;
    while (this.pos < this.src.length) {
      const c = this.at();
      if (backslashEscapes && c === "\\") {
        value += this.at(1);
        this.pos += 2;
        continue;
      }
      if (c === close) {
        if (close !== "]" && this.at(1) === close) {
          value += close;
          this.pos += 2;
          continue;
        }
        this.pos++;
        return value;
      }
      value += c;
      this.pos++;
    }
    return undefined;
  }
}

function skipBlockComment(s: Scanner): boolean {
  let depth = 0;
  while (s.pos < s.src.length) {
    if (s.at() === "/" && s.at(1) === "*") {
      // Postgres nests block comments; SQLite ends at the first */.
      if (depth === 0 || s.dialect === "postgres") depth++;
      s.pos += 2;
    } else if (s.at() === "*" && s.at(1) === "/") {
      depth--;
      s.pos += 2;
      if (depth === 0) return true;
    } else {
      s.pos++;
    }
  }
  return false;
}

function skipLineComment(s: Scanner): void {
  // Postgres ends a -- comment at \r as well as \n; SQLite only at \n.
  while (s.pos < s.src.length && s.at() !== "\n" && !(s.dialect === "postgres" && s.at() === "\r")) s.pos++;
}

function scanNumber(s: Scanner): void {
  const start = s.pos;
  if (s.at() === "0" && (s.at(1) === "x" || s.at(1) === "X")) {
    s.pos += 2;
    while (/[0-9a-fA-F_]/.test(s.at())) s.pos++;
  } else {
    while (isDigit(s.at()) || s.at() === "_") s.pos++;
    if (s.at() === ".") {
      s.pos++;
      while (isDigit(s.at()) || s.at() === "_") s.pos++;
    }
    const sign = s.at(1) === "+" || s.at(1) === "-" ? 1 : 0;
    if ((s.at() === "e" || s.at() === "E") && isDigit(s.at(1 + sign))) {
      s.pos += 2 + sign;
      while (isDigit(s.at())) s.pos++;
    }
  }
  // Letters right after a number start a new word (`1into` is `1 INTO` to older Postgres), so they stay visible.
  s.push("number", start);
}

/** `$tag$` at the current position, or undefined when `$` does not open a dollar quote. */
function dollarTag(s: Scanner): string | undefined {
  let end = s.pos + 1;
  if (isIdentStart(s.src.charAt(end))) {
    end++;
    while (end < s.src.length && (isIdentStart(s.src.charAt(end)) || isDigit(s.src.charAt(end)))) end++;
  }
  return s.src.charAt(end) === "$" ? s.src.slice(s.pos, end + 1) : undefined;
}

/**
 * SQLite's variables: `:name`, `@name`, `#name`, `$name`, also `$a::b` and `$name(text)`, whose text runs to
 * the first space or `)` (quotes included). Returns false when SQLite would see an illegal token.
 */
function scanSqliteVariable(s: Scanner): boolean {
  const start = s.pos;
  let n = 0;
  s.pos++;
  while (s.pos < s.src.length) {
    const c = s.at();
    if (isIdentChar(c)) {
      n++;
      s.pos++;
    } else if (c === "(" && n > 0) {
      s.pos++;
      while (s.pos < s.src.length && !isSpace(s.at(), "sqlite") && s.at() !== ")") s.pos++;
      if (s.at() !== ")") return false;
      s.pos++;
      break;
    } else if (c === ":" && s.at(1) === ":") {
      s.pos += 2;
    } else {
      break;
    }
  }
  if (n === 0) {
    // A lone `:` or `$` is illegal to SQLite; as punctuation it hides nothing from the checks.
    s.pos = start + 1;
    s.push("punct", start);
  } else {
    s.push("param", start);
  }
  return true;
}

function scanOne(s: Scanner): string | undefined {
  const c = s.at();
  const start = s.pos;
  const pg = s.dialect === "postgres";
  if (isSpace(c, s.dialect)) {
    s.pos++;
  } else if (c === "-" && s.at(1) === "-") {
    skipLineComment(s);
  } else if (c === "/" && s.at(1) === "*") {
    if (!skipBlockComment(s)) return `unterminated /* comment at offset ${start}`;
  } else if (c === "'") {
    // E'...' strings take backslash escapes in Postgres; the E was read as a word just before.
    const prev = s.tokens.at(-1);
    const escaped = pg && prev !== undefined && prev.kind === "word" && prev.end === start && /^[eE]$/.test(prev.text);
    if (s.quoted("'", escaped) === undefined) return `unterminated string literal at offset ${start}`;
    if (escaped && prev !== undefined) {
      s.tokens.pop();
      s.push("string", prev.start);
    } else {
      s.push("string", start);
    }
  } else if (c === '"' || (!pg && c === "`")) {
    const name = s.quoted(c, false);
    if (name === undefined) return `unterminated quoted identifier at offset ${start}`;
    s.push("quoted", start, name);
  } else if (!pg && c === "[") {
    const name = s.quoted("]", false);
    if (name === undefined) return `unterminated [identifier] at offset ${start}`;
    s.push("quoted", start, name);
  } else if (isDigit(c) || (c === "." && isDigit(s.at(1)))) {
    scanNumber(s);
  } else if (isIdentStart(c)) {
    while (s.pos < s.src.length && isIdentChar(s.at())) s.pos++;
    s.push("word", start);
  } else if (pg && c === "$") {
    const tag = dollarTag(s);
    if (tag !== undefined) {
      const close = s.src.indexOf(tag, s.pos + tag.length);
      if (close < 0) return `unterminated dollar-quoted string ${tag} at offset ${start}`;
      s.pos = close + tag.length;
      s.push("string", start);
    } else {
      s.pos++;
      while (isDigit(s.at())) s.pos++;
      s.push(s.pos - start > 1 ? "param" : "punct", start);
    }
  } else if (!pg && (c === "$" || c === ":" || c === "@" || c === "#")) {
    if (!scanSqliteVariable(s)) return `malformed variable at offset ${start}`;
  } else if (c === "?") {
    s.pos++;
    while (!pg && isDigit(s.at())) s.pos++;
    s.push(pg ? "punct" : "param", start);
  } else {
    s.pos++;
    s.push("punct", start);
  }
  return undefined;
}

export function tokenizeSql(sql: string, dialect: SqlDialect): TokenizeResult {
  const s = new Scanner(sql, dialect);
  while (s.pos < sql.length) {
    const error = scanOne(s);
    if (error !== undefined) return { ok: false, message: error };
  }
  return { ok: true, tokens: s.tokens };
}
