/**
 * Reads CREATE TABLE statements into a DatabaseSchema, for databases registered with their DDL instead
 * of being read by a connector. Column names, declared types, primary keys, NOT NULL and foreign keys
 * (inline and table constraints) are kept; CHECK, DEFAULT, UNIQUE and the like say nothing a prompt
 * needs. Other statements (indexes, views, inserts) are skipped, so a schema dump can be pasted whole.
 */
import type { Column, DatabaseSchema, Table } from "./db-schema";
import type { SqlDialect } from "./sql-dialect";
import { type SqlToken, tokenizeSql } from "./sql-tokens";

export type DdlParseResult = { ok: true; value: DatabaseSchema } | { ok: false; message: string };

class DdlError extends Error {}

/** Words that end a column's type and start its constraints. */
const CONSTRAINT_WORDS = new Set(["CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED", "AS", "AUTOINCREMENT"]);
const TABLE_CONSTRAINT_WORDS = new Set(["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "EXCLUDE"]);

const upper = (t: SqlToken | undefined) => (t?.kind === "word" ? t.text.toUpperCase() : undefined);
const isPunct = (t: SqlToken | undefined, text: string) => t?.kind === "punct" && t.text === text;

interface PendingColumn extends Omit<Column, "references"> {
  notNull: boolean;
  references?: { table: string; column?: string };
}

class Reader {
  pos = 0;
  constructor(
    readonly tokens: readonly SqlToken[],
    readonly src: string,
    readonly dialect: SqlDialect,
  ) {}

  peek(offset = 0): SqlToken | undefined {
    return this.tokens[this.pos + offset];
  }

  /** An identifier as the database stores it: Postgres folds unquoted names to lower case. */
  name(what: string): string {
    const t = this.peek();
    this.pos++;
    if (t?.kind === "quoted" && t.name !== undefined) return t.name;
    if (t?.kind === "word") return this.dialect === "postgres" ? t.text.toLowerCase() : t.text;
    throw new DdlError(`expected ${what}, found ${t === undefined ? "the end of the text" : t.text}`);
  }

  /** `a.b.c` is c: prompts name tables the way queries do in the default schema. */
  qualifiedName(what: string): string {
    let name = this.name(what);
    while (isPunct(this.peek(), ".")) {
      this.pos++;
      name = this.name(what);
    }
    return name;
  }

  nameList(what: string): string[] {
    if (!isPunct(this.peek(), "(")) throw new DdlError(`expected ( and a list of ${what}`);
    this.pos++;
    const names = [this.name(what)];
    while (isPunct(this.peek(), ",")) {
      this.pos++;
      names.push(this.name(what));
    }
    if (!isPunct(this.peek(), ")")) throw new DdlError(`expected ) after the list of ${what}`);
    this.pos++;
    return names;
  }

  /** Skips one token, or a whole parenthesised group. */
  skip(): void {
    let depth = 0;
    do {
      const t = this.peek();
      if (t === undefined) return;
      if (isPunct(t, "(")) depth++;
      else if (isPunct(t, ")")) depth--;
      this.pos++;
    } while (depth > 0);
  }

  atEnd(): boolean {
    const t = this.peek();
    return t === undefined || isPunct(t, ",") || isPunct(t, ")");
  }
}

function references(r: Reader): { table: string; column?: string } {
  r.pos++; // REFERENCES
  const table = r.qualifiedName("the referenced table");
  if (!isPunct(r.peek(), "(")) return { table };
  const columns = r.nameList("referenced columns");
  return columns.length === 1 && columns[0] !== undefined ? { table, column: columns[0] } : { table };
}

function columnDefinition(r: Reader): PendingColumn {
  const name = r.name("a column name");
  const typeStart = r.peek();
  let typeEnd: SqlToken | undefined;
  while (!r.atEnd() && !CONSTRAINT_WORDS.has(upper(r.peek()) ?? "")) {
    r.skip();
    typeEnd = r.tokens[r.pos - 1];
  }
  const type = typeStart !== undefined && typeEnd !== undefined ? r.src.slice(typeStart.start, typeEnd.end) : "";
  const column: PendingColumn = { name, type, primaryKey: false, nullable: true, notNull: false };
  while (!r.atEnd()) {
    const word = upper(r.peek());
    if (word === "PRIMARY" && upper(r.peek(1)) === "KEY") {
      column.primaryKey = true;
      r.pos += 2;
    } else if (word === "NOT" && upper(r.peek(1)) === "NULL") {
      column.notNull = true;
      r.pos += 2;
    } else if (word === "REFERENCES") {
      column.references = references(r);
    } else {
      r.skip();
    }
  }
  return column;
}

function tableConstraint(r: Reader, columns: PendingColumn[]): void {
  const find = (name: string) => {
    const column = columns.find((c) => c.name === name);
    if (column === undefined) throw new DdlError(`the constraint names column ${name}, which the table does not have`);
    return column;
  };
  while (!r.atEnd()) {
    const word = upper(r.peek());
    if (word === "PRIMARY" && upper(r.peek(1)) === "KEY") {
      r.pos += 2;
      for (const name of r.nameList("key columns")) find(name).primaryKey = true;
    } else if (word === "FOREIGN" && upper(r.peek(1)) === "KEY") {
      r.pos += 2;
      const from = r.nameList("foreign key columns");
      if (upper(r.peek()) !== "REFERENCES") throw new DdlError("expected REFERENCES after FOREIGN KEY (...)");
      const ref = references(r);
      // A composite key references a composite key: one column's reference would misstate it.
      if (from.length === 1 && from[0] !== undefined) find(from[0]).references = ref;
    } else {
      r.skip();
    }
  }
}

function createTable(r: Reader): { name: string; columns: PendingColumn[] } {
  if (upper(r.peek()) === "IF" && upper(r.peek(1)) === "NOT" && upper(r.peek(2)) === "EXISTS") r.pos += 3;
  const name = r.qualifiedName("a table name");
  if (!isPunct(r.peek(), "(")) throw new DdlError(`table ${name}: only CREATE TABLE with a column list can be read (not CREATE TABLE ... AS)`);
  r.pos++;
  const columns: PendingColumn[] = [];
  for (;;) {
    const word = upper(r.peek());
    // SQLite accepts some of these words as column names (`check TEXT`): then a type follows, not "(".
    const isConstraint = word !== undefined && TABLE_CONSTRAINT_WORDS.has(word) && (["CONSTRAINT", "PRIMARY", "FOREIGN"].includes(word) || r.peek(1)?.kind !== "word");
    try {
      if (isConstraint) tableConstraint(r, columns);
      else columns.push(columnDefinition(r));
    } catch (e) {
      throw e instanceof DdlError ? new DdlError(`table ${name}: ${e.message}`) : e;
    }
    if (isPunct(r.peek(), ",")) r.pos++;
    else if (isPunct(r.peek(), ")")) break;
    else throw new DdlError(`table ${name}: the column list is not closed`);
  }
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.name.toLowerCase())) throw new DdlError(`table ${name}: column ${c.name} is defined twice`);
    seen.add(c.name.toLowerCase());
  }
  if (columns.length === 0) throw new DdlError(`table ${name} has no columns`);
  return { name, columns };
}

/** A reference without a column means the referenced table's primary key, which may be defined later in the text. */
function resolve(pending: { name: string; columns: PendingColumn[] }[]): Table[] {
  const keyOf = new Map(pending.map((t) => [t.name, t.columns.filter((c) => c.primaryKey)] as const));
  return pending.map((t) => ({
    name: t.name,
    columns: t.columns.map(({ notNull, references: ref, ...c }): Column => {
      const column: Column = { ...c, nullable: !notNull && !c.primaryKey };
      const keys = ref === undefined ? [] : (keyOf.get(ref.table) ?? []);
      const target = ref?.column ?? (keys.length === 1 ? keys[0]?.name : undefined);
      if (ref !== undefined && target !== undefined) column.references = { table: ref.table, column: target };
      return column;
    }),
  }));
}

/** The tables of every CREATE TABLE statement in `ddl`, in order. */
export function parseDdl(ddl: string, dialect: SqlDialect): DdlParseResult {
  const lexed = tokenizeSql(ddl, dialect);
  if (!lexed.ok) return { ok: false, message: `the DDL cannot be read: ${lexed.message}` };
  const r = new Reader(lexed.tokens, ddl, dialect);
  const tables: { name: string; columns: PendingColumn[] }[] = [];
  try {
    while (r.peek() !== undefined) {
      const start = r.pos;
      let i = start;
      if (upper(r.tokens[i]) === "CREATE") {
        i++;
        while (["TEMP", "TEMPORARY", "UNLOGGED", "GLOBAL", "LOCAL"].includes(upper(r.tokens[i]) ?? "")) i++;
      }
      if (i > start && upper(r.tokens[i]) === "TABLE") {
        r.pos = i + 1;
        const table = createTable(r);
        if (tables.some((t) => t.name === table.name)) throw new DdlError(`table ${table.name} is defined twice`);
        tables.push(table);
      }
      while (r.peek() !== undefined && !isPunct(r.peek(), ";")) r.skip();
      r.pos++;
    }
  } catch (e) {
    if (e instanceof DdlError) return { ok: false, message: `the DDL cannot be read: ${e.message}` };
    throw e;
  }
  if (tables.length === 0) return { ok: false, message: "the DDL has no CREATE TABLE statement" };
  return { ok: true, value: { dialect, tables: resolve(tables) } };
}
