import { describe, expect, it } from "vitest";
import { STEP } from "../../src/core/chess";
import { schemaToDdl, type DatabaseSchema } from "../../src/core/db-schema";
import { extractJson, fencedBlocks, SCHEMA_MARKER, TASK_MARKER } from "../../src/core/text2sql/format";
import { buildCandidatePrompt, parseCandidate } from "../../src/core/text2sql/prompts/candidate";
import { buildEvaluatePrompt, parseEvaluation } from "../../src/core/text2sql/prompts/evaluate";
import { buildKeywordsPrompt, parseKeywords } from "../../src/core/text2sql/prompts/keywords";
import { buildRevisePrompt, parseRevise } from "../../src/core/text2sql/prompts/revise";
import {
  RETRIEVER_TOOLS,
  ROUTER_DONE,
  UNIT_TESTER_TOOLS,
  buildRouterPrompt,
  parseRouter,
} from "../../src/core/text2sql/prompts/router";
import {
  SCHEMA_SELECTION_STEP,
  buildSchemaLinkingPrompt,
  linkedSchema,
  parseSchemaLinking,
} from "../../src/core/text2sql/prompts/schema-linking";
import { buildUnitTestPrompt, parseUnitTests } from "../../src/core/text2sql/prompts/unit-test";
import { parseSql } from "../../src/core/text2sql/sql-answer";

const schema: DatabaseSchema = {
  dialect: "sqlite",
  tables: [
    {
      name: "stores",
      columns: [
        { name: "id", type: "INTEGER", primaryKey: true, nullable: false },
        { name: "city", type: "TEXT", primaryKey: false, nullable: false },
      ],
    },
    {
      name: "orders",
      columns: [
        { name: "id", type: "INTEGER", primaryKey: true, nullable: false },
        { name: "store_id", type: "INTEGER", primaryKey: false, nullable: false, references: { table: "stores", column: "id" } },
        { name: "total", type: "REAL", primaryKey: false, nullable: true },
        { name: "placed_at", type: "TEXT", primaryKey: false, nullable: true },
      ],
    },
    {
      name: "staff",
      columns: [
        { name: "id", type: "INTEGER", primaryKey: true, nullable: false },
        { name: "name", type: "TEXT", primaryKey: false, nullable: false },
      ],
    },
  ],
};
const linked: DatabaseSchema = { dialect: "sqlite", tables: schema.tables.slice(0, 2) };
const staffDdl = schemaToDdl({ dialect: "sqlite", tables: schema.tables.slice(2) });
const question = "Which city had the highest order total in 2024?";
const sql = "SELECT s.city FROM orders o JOIN stores s ON s.id = o.store_id GROUP BY s.city ORDER BY SUM(o.total) DESC LIMIT 1";
const error = "no such column: o.totl (at offset 62)";

const firstLine = (prompt: string) => prompt.split("\n")[0];

describe("prompts", () => {
  const prompts: [string, string, boolean][] = [
    [STEP.retriever, buildRouterPrompt({ agent: STEP.retriever, question, tools: RETRIEVER_TOOLS, done: [] }), false],
    [STEP.unitTester, buildRouterPrompt({ agent: STEP.unitTester, question, tools: UNIT_TESTER_TOOLS, done: [STEP.unitTest] }), false],
    [STEP.keywords, buildKeywordsPrompt({ question, hint: "total means orders.total" }), false],
    [SCHEMA_SELECTION_STEP, buildSchemaLinkingPrompt({ question, schema, keywords: ["city", "2024"] }), true],
    [STEP.candidate, buildCandidatePrompt({ question, schema: linked }), true],
    [STEP.revise, buildRevisePrompt({ question, schema: linked, sql, problem: { kind: "error", message: error } }), true],
    [STEP.unitTest, buildUnitTestPrompt({ question, schema: linked, candidates: [{ sql }, { sql: "SELECT 1", result: "1" }], count: 3 }), true],
    [STEP.evaluate, buildEvaluatePrompt({ question, schema: linked, candidate: { sql, result: "Berlin" }, tests: ["one row", "one column"] }), true],
  ];

  it.each(prompts)("%s starts with its task marker and carries the question", (step, prompt) => {
    expect(firstLine(prompt)).toBe(`${TASK_MARKER} ${step}`);
    expect(prompt).toContain(question);
  });

  it.each(prompts)("%s carries the schema section where it should", (_step, prompt, hasSchema) => {
    expect(prompt.includes(SCHEMA_MARKER)).toBe(hasSchema);
  });

  it("schema linking gets the whole schema, candidate and revise only the linked tables", () => {
    expect(prompts[3]?.[1]).toContain(schemaToDdl(schema));
    for (const i of [4, 5]) {
      expect(prompts[i]?.[1]).toContain(schemaToDdl(linked));
      expect(prompts[i]?.[1]).not.toContain(staffDdl);
    }
  });

  it("revise carries the previous SQL and the exact error; an empty result is said so", () => {
    const revise = prompts[5]?.[1] ?? "";
    expect(revise).toContain(sql);
    expect(revise).toContain(error);
    const empty = buildRevisePrompt({ question, schema: linked, sql, problem: { kind: "empty" } });
    expect(empty).toContain(sql);
    expect(empty).toMatch(/returned no rows/);
  });

  it("unit tests and evaluate carry the candidates and the tests", () => {
    expect(prompts[6]?.[1]).toContain("SELECT 1");
    expect(prompts[6]?.[1]).toContain("### candidate 2");
    expect(prompts[7]?.[1]).toContain("test 2: one column");
    expect(prompts[7]?.[1]).toContain("Berlin");
  });

  it("keeps the hint and lists what the router already ran", () => {
    expect(prompts[2]?.[1]).toContain("Hint: total means orders.total");
    expect(prompts[1]?.[1]).toContain(`Already run, in order: ${STEP.unitTest}`);
  });
});

describe("format helpers", () => {
  it("reads fenced blocks, unclosed ones to the end", () => {
    expect(fencedBlocks("a\n```SQL\nSELECT 1\n```\nb\n```json\n[1")).toEqual([
      { lang: "sql", body: "SELECT 1\n", closed: true },
      { lang: "json", body: "[1", closed: false },
    ]);
  });
  it("finds strict JSON in prose, skipping bracketed prose", () => {
    expect(extractJson('See [above]. Answer: ["a", "b]"] done', "[")).toEqual(["a", "b]"]);
    expect(extractJson('["a", "b",]', "[")).toBeUndefined();
  });
});

describe("parseSql and the SQL parsers", () => {
  it("takes the SQL out of a clean answer", () => {
    expect(parseCandidate("```sql\nSELECT city FROM stores\n```")).toEqual({ ok: true, value: "SELECT city FROM stores" });
  });
  it("tolerates prose, upper-case SQL tag, a missing closing fence and a trailing semicolon", () => {
    expect(parseCandidate("Let me think.\n```SQL\nSELECT 1;\n```\nThis returns one.")).toEqual({ ok: true, value: "SELECT 1" });
    expect(parseRevise("Fixed:\n```sql\nSELECT total FROM orders")).toEqual({ ok: true, value: "SELECT total FROM orders" });
    expect(parseSql("SELECT 2")).toEqual({ ok: true, value: "SELECT 2" });
  });
  it("takes the last sql block, and a bare fence only when it holds a query", () => {
    expect(parseSql("```sql\nSELECT 1\n```\nbetter:\n```sql\nSELECT 2\n```")).toEqual({ ok: true, value: "SELECT 2" });
    expect(parseSql("```\nWITH a AS (SELECT 1) SELECT * FROM a\n```")).toEqual({ ok: true, value: "WITH a AS (SELECT 1) SELECT * FROM a" });
  });
  it("returns an unparseable error naming the step when there is no SQL", () => {
    for (const text of ["I cannot answer that.", "The query is SELECT 1 I think", "```python\nprint(1)\n```", "```sql\n```"]) {
      const r = parseRevise(text);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("unparseable");
        expect(r.error.message).toContain(STEP.revise);
      }
    }
  });
  it("refuses a non-read-only answer through the guard", () => {
    const r = parseSql("```sql\nDELETE FROM x\n```");
    expect(r).toEqual({ ok: false, error: { code: "not_read_only", message: "only SELECT/WITH queries may run; found DELETE" } });
    expect(parseCandidate("```sql\nSELECT 1; DROP TABLE stores\n```", "postgres")).toMatchObject({ ok: false, error: { code: "multiple_statements" } });
  });
});

describe("parseKeywords", () => {
  it("reads a clean array and one wrapped in prose or a fence", () => {
    expect(parseKeywords('["city", "2024"]')).toEqual({ ok: true, value: ["city", "2024"] });
    expect(parseKeywords('Keywords:\n```json\n["city", " city ", "order total"]\n```\nDone.')).toEqual({ ok: true, value: ["city", "order total"] });
  });
  it("rejects malformed answers", () => {
    expect(parseKeywords("city, 2024")).toMatchObject({ ok: false, error: { code: "unparseable" } });
    expect(parseKeywords('["city", 3]')).toMatchObject({ ok: false, error: { code: "unparseable" } });
    expect(parseKeywords('["city", "2024",]')).toMatchObject({ ok: false, error: { code: "unparseable" } });
  });
});

describe("parseSchemaLinking and linkedSchema", () => {
  it("reads a clean answer and one in prose", () => {
    const value = { tables: { orders: ["id", "store_id"] } };
    expect(parseSchemaLinking(JSON.stringify(value))).toEqual({ ok: true, value });
    expect(parseSchemaLinking(`We need orders. {"note": 1} then ${JSON.stringify(value)} as asked.`)).toEqual({ ok: true, value });
    expect(parseSchemaLinking(`We need orders.\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``)).toEqual({ ok: true, value });
  });
  it("rejects malformed answers", () => {
    for (const text of ["orders, stores", '{"tables": ["orders"]}', '{"tables": {"orders": "id"}}', '{"tables": {}}']) {
      expect(parseSchemaLinking(text)).toMatchObject({ ok: false, error: { code: "unparseable" } });
    }
  });
  it("narrows the schema, keeping keys, and reports unknown names", () => {
    const r = linkedSchema(schema, { tables: { ORDERS: ["total", "nope"], stores: [], ghosts: ["x"] } });
    expect(r.unknown).toEqual(["ghosts", "orders.nope"]);
    expect(r.schema.tables.map((t) => [t.name, t.columns.map((c) => c.name)])).toEqual([
      ["stores", ["id", "city"]],
      ["orders", ["id", "store_id", "total"]],
    ]);
  });
});

describe("parseRouter", () => {
  it("reads the next tool, in prose and with decoration", () => {
    expect(parseRouter("next: extract_keywords", STEP.retriever, RETRIEVER_TOOLS)).toEqual({ ok: true, value: { next: STEP.keywords } });
    expect(parseRouter("Tests are written.\n**Next:** `Evaluate`.", STEP.unitTester, UNIT_TESTER_TOOLS)).toEqual({ ok: true, value: { next: STEP.evaluate } });
    expect(parseRouter("next: DONE", STEP.unitTester, UNIT_TESTER_TOOLS)).toEqual({ ok: true, value: { next: ROUTER_DONE } });
  });
  it("rejects a missing line or a tool not offered", () => {
    expect(parseRouter("extract_keywords", STEP.retriever, RETRIEVER_TOOLS)).toMatchObject({ ok: false, error: { code: "unparseable" } });
    const r = parseRouter("next: drop_tables", STEP.retriever, RETRIEVER_TOOLS);
    expect(r).toMatchObject({ ok: false, error: { code: "unparseable" } });
    if (!r.ok) expect(r.error.message).toContain(STEP.retriever);
  });
});

describe("parseUnitTests", () => {
  it("reads a clean list and one wrapped in prose, with continuation lines", () => {
    expect(parseUnitTests("1. one row\n2. one column")).toEqual({ ok: true, value: ["one row", "one column"] });
    expect(parseUnitTests("Here are tests:\n\n1) The result has one row\n   named city.\n**2.** Ties are broken by name\nHope it helps.")).toEqual({
      ok: true,
      value: ["The result has one row named city.", "Ties are broken by name"],
    });
  });
  it("takes the last list when numbered reasoning comes first", () => {
    expect(parseUnitTests("Steps:\n1. read the question\n2. read the schema\nTests:\n1. one row\n2. one column")).toEqual({
      ok: true,
      value: ["one row", "one column"],
    });
    expect(parseUnitTests("1. a\n1. b")).toEqual({ ok: true, value: ["a", "b"] });
  });
  it("rejects an answer with no numbered list", () => {
    expect(parseUnitTests("- one row\n- one column")).toMatchObject({ ok: false, error: { code: "unparseable", message: expect.stringContaining(STEP.unitTest) } });
  });
});

describe("parseEvaluation", () => {
  it("reads clean lines, prose-wrapped lines (last verdict wins) and JSON", () => {
    expect(parseEvaluation("test 1: PASS\ntest 2: FAIL", 2)).toEqual({ ok: true, value: [true, false] });
    expect(parseEvaluation("Test 1: pass at first sight, but...\nFinal:\n**Test 1:** FAIL\nTest 2 - Passed", 2)).toEqual({ ok: true, value: [false, true] });
    expect(parseEvaluation('Verdicts: {"test 1": "PASS", "2": false}', 2)).toEqual({ ok: true, value: [true, false] });
  });
  it("rejects answers with no verdicts or missing tests", () => {
    expect(parseEvaluation("Looks good to me.", 2)).toMatchObject({ ok: false, error: { code: "unparseable" } });
    const r = parseEvaluation("test 1: PASS", 3);
    expect(r).toMatchObject({ ok: false, error: { code: "unparseable" } });
    if (!r.ok) expect(r.error.message).toContain("test 2, 3");
  });
});
