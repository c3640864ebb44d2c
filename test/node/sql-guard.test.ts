import { describe, expect, it } from "vitest";
import type { SqlDialect } from "../../src/core/sql-dialect";
import { checkReadOnlySql } from "../../src/core/sql-guard";
import { tokenizeSql } from "../../src/core/sql-tokens";

const both: SqlDialect[] = ["sqlite", "postgres"];

describe("checkReadOnlySql accepts one read", () => {
  it.each([
    ["SELECT 1", "SELECT 1"],
    ["  select * from t ;  ", "select * from t"],
    ["SELECT 1;;", "SELECT 1"],
    ["-- the answer\nSELECT 42 /* trailing */ ; -- done", "SELECT 42"],
    ["WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n", undefined],
    ["VALUES (1, 'a'), (2, 'b')", undefined],
    ["(SELECT 1) UNION (SELECT 2)", undefined],
    ["SELECT ';'", undefined],
    ["SELECT 'DROP TABLE users; DELETE FROM t' AS s", undefined],
    ["SELECT 'it''s; DELETE' FROM t", undefined],
    ['SELECT "delete", "insert into" FROM "update"', undefined],
    ["SELECT 1 -- ; DROP TABLE t\n", "SELECT 1"],
    ["SELECT 1 /* ; INSERT INTO t VALUES (1) */ + 1", undefined],
    ["SELECT replace(name, 'a', 'b') FROM t", undefined],
    ["SELECT t.comment, c.set FROM t JOIN c ON c.id = t.id", undefined],
    ["SELECT created_at, updated_by, deleted, insert_count FROM t", undefined],
    ["SELECT count(*) FROM orders WHERE status = 'DELETE' ORDER BY 1 LIMIT 10", undefined],
  ])("%j", (sql, statement) => {
    for (const dialect of both) {
      const r = checkReadOnlySql(sql, dialect);
      expect(r, dialect).toEqual({ ok: true, value: { statement: statement ?? sql } });
    }
  });

  it.each([
    ["SELECT [order], `group` FROM [my table]", "sqlite"],
    ["SELECT $$; DROP TABLE t; $$ AS s", "postgres"],
    ["SELECT $fn$ it's; DELETE $fn$ AS s", "postgres"],
    ["SELECT E'a\\'; DELETE FROM t; --'", "postgres"],
    ["SELECT 1 /* outer /* inner */ ; DROP TABLE t; */", "postgres"],
    ["SELECT a[1] FROM t WHERE b = $1", "postgres"],
    ["SELECT x::text, y ? 'k' FROM t", "postgres"],
  ] as const)("%j in %s", (sql, dialect) => {
    expect(checkReadOnlySql(sql, dialect).ok).toBe(true);
  });
});

describe("checkReadOnlySql refuses", () => {
  it.each([
    ["INSERT INTO t VALUES (1)", "INSERT"],
    ["UPDATE t SET a = 1", "UPDATE"],
    ["DELETE FROM t", "DELETE"],
    ["REPLACE INTO t VALUES (1)", "REPLACE"],
    ["ATTACH DATABASE 'x.db' AS x", "ATTACH"],
    ["PRAGMA journal_mode=DELETE", "PRAGMA"],
    ["PRAGMA query_only = OFF", "PRAGMA"],
    ["CREATE TABLE x (a INT)", "CREATE"],
    ["DROP TABLE x", "DROP"],
    ["BEGIN", "BEGIN"],
    ["EXPLAIN ANALYZE SELECT 1", "EXPLAIN"],
    ["/* just a read */ DELETE FROM t", "DELETE"],
    ["-- SELECT\nUPDATE t SET a = 1", "UPDATE"],
    ["WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "DELETE"],
    ["WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "INSERT"],
    ["SELECT * FROM t FOR UPDATE", "UPDATE"],
    ["SELECT set_config('x', 'y', false)", "set_config"],
    ["(((DELETE FROM t)))", "DELETE"],
    ["delete from t", "DELETE"],
  ])("%j (found %s)", (sql, found) => {
    for (const dialect of both) {
      const r = checkReadOnlySql(sql, dialect);
      expect(r.ok, dialect).toBe(false);
      if (r.ok) continue;
      expect(r.error.code).toBe("not_read_only");
      expect(r.error.message).toContain(found);
    }
  });

  it.each([
    ["SELECT * INTO backup FROM users", "postgres", "INTO"],
    ["SELECT 1into backup", "postgres", "INTO"],
    ["SELECT load_extension('/tmp/evil.so')", "sqlite", "load_extension"],
    ["SELECT \"load_extension\"('/tmp/evil.so')", "sqlite", "load_extension"],
    ["SELECT [readfile]('/etc/passwd')", "sqlite", "readfile"],
    ["SELECT writefile('/tmp/x', 'y')", "sqlite", "writefile"],
    ["SELECT pg_catalog.pg_read_file('/etc/passwd')", "postgres", "pg_read_file"],
    ["SELECT pg_sleep(1000)", "postgres", "pg_sleep"],
    ["SELECT lo_export(1, '/tmp/x')", "postgres", "lo_export"],
    ["SELECT * FROM dblink('host=evil', 'DELETE FROM t') AS x(a int)", "postgres", "dblink"],
    ["SELECT pg_terminate_backend(1)", "postgres", "pg_terminate_backend"],
    ["SELECT comment FROM posts", "sqlite", 'quote it if it names a column: "comment"'],
  ] as const)("%j in %s (names %s)", (sql, dialect, named) => {
    const r = checkReadOnlySql(sql, dialect);
    expect(r).toMatchObject({ ok: false, error: { code: "not_read_only" } });
    if (!r.ok) expect(r.error.message).toContain(named);
  });

  it.each([
    ["SELECT 1; DROP TABLE x", "DROP"],
    ["SELECT 1; SELECT 2", "SELECT"],
    ["SELECT ';'; DELETE FROM t", "DELETE"],
    ["SELECT 1 -- x\n; UPDATE t SET a = 1", "UPDATE"],
  ])("%j as multiple statements", (sql, second) => {
    for (const dialect of both) {
      const r = checkReadOnlySql(sql, dialect);
      expect(r).toMatchObject({ ok: false, error: { code: "multiple_statements" } });
      if (!r.ok) expect(r.error.message).toBe(`only one statement may run; found 2 (the second starts with ${second})`);
    }
  });

  it.each(["", "   ", ";", " ; ; ", "-- only a comment", "/* nothing */"])("%j as empty", (sql) => {
    for (const dialect of both) expect(checkReadOnlySql(sql, dialect)).toMatchObject({ ok: false, error: { code: "empty_statement" } });
  });

  it.each([
    // Each hides a second statement from a tokenizer that reads the string or comment the wrong way.
    ["SELECT E'\\''; DROP TABLE t; --'", "postgres", "multiple_statements"],
    ["SELECT 1 --x\r; DROP TABLE t", "postgres", "multiple_statements"],
    ["SELECT $a(')+1; DROP TABLE t; SELECT (''", "sqlite", "multiple_statements"],
    ["SELECT $$; DROP TABLE t; $$", "sqlite", "multiple_statements"],
    ["SELECT 'unterminated; DROP TABLE t", "sqlite", "not_read_only"],
    ["SELECT 1 /* unterminated ; DROP TABLE t", "postgres", "not_read_only"],
    ["SELECT $tag$ never closed", "postgres", "not_read_only"],
  ] as const)("%j in %s where the dialects' lexers differ", (sql, dialect, code) => {
    expect(checkReadOnlySql(sql, dialect)).toMatchObject({ ok: false, error: { code } });
  });
});

describe("tokenizeSql", () => {
  it("keeps strings, identifiers and comments apart as each dialect does", () => {
    const kinds = (sql: string, dialect: SqlDialect) => {
      const r = tokenizeSql(sql, dialect);
      return r.ok ? r.tokens.map((t) => `${t.kind}:${t.text}`) : [r.message];
    };
    expect(kinds("SELECT `a``b`, [c d] -- x\n FROM t", "sqlite")).toEqual(["word:SELECT", "quoted:`a``b`", "punct:,", "quoted:[c d]", "word:FROM", "word:t"]);
    expect(kinds("SELECT e'x\\'y', $q$a$q$, $1, 1.5e-3", "postgres")).toEqual([
      "word:SELECT", "string:e'x\\'y'", "punct:,", "string:$q$a$q$", "punct:,", "param:$1", "punct:,", "number:1.5e-3",
    ]);
    expect(kinds("SELECT :a, @b, $c::d(x;y), ?2", "sqlite")).toEqual([
      "word:SELECT", "param::a", "punct:,", "param:@b", "punct:,", "param:$c::d(x;y)", "punct:,", "param:?2",
    ]);
    const quoted = tokenizeSql('SELECT "a""b"', "postgres");
    expect(quoted.ok && quoted.tokens[1]?.name).toBe('a"b');
  });
});
