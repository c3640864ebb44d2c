/**
 * The Text-to-SQL state machine driven end to end in Node: models are the emulator's Text-to-SQL mode (or
 * scripted answers), queries run on the demo database in sql.js. Every step's state must survive the JSON
 * round trip a Durable Object puts it through.
 */
import { readFileSync } from "node:fs";
import initSqlJs, { type Database } from "sql.js";
import { beforeAll, describe, expect, it } from "vitest";
import { STEP } from "../../src/core/chess";
import { runSqliteQuery, readSqliteSchema } from "../../src/connector/sqlite-queries";
import type { DatabaseSchema } from "../../src/core/db-schema";
import { cursorPlanner, newPlan } from "../../src/core/remaining";
import { checkReadOnlySql } from "../../src/core/sql-guard";
import { taskLine } from "../../src/core/text2sql/format";
import { newText2SqlRun, onExecuted, onStageDone, type ExecOutcome, type Text2SqlAction } from "../../src/core/text2sql/run";
import { Text2SqlConfigSchema, Text2SqlRunSchema, text2sqlTemplate, type Text2SqlRun } from "../../src/core/text2sql/run-state";
import type { StageSpec } from "../../src/core/workflow";
import { text2sqlAnswer, text2sqlPieces } from "../../src/emulator/text2sql/answer";
import { DemoQuestionsSchema } from "../../scripts/lib/demo-data/questions-schema";

const root = new URL("../..", import.meta.url);
const questions = DemoQuestionsSchema.parse(JSON.parse(readFileSync(new URL("data/demo/questions.json", root), "utf8")));
let db: Database;
let schema: DatabaseSchema;

beforeAll(async () => {
  const SQL = await initSqlJs();
  db = new SQL.Database();
  db.exec(readFileSync(new URL("data/demo/demo.sql", root), "utf8"));
  schema = readSqliteSchema(db);
});

type Model = (prompt: string, step: string, maxTokens: number) => string;
const executedSql: string[] = [];

function execute(sql: string, maxRows: number): ExecOutcome {
  // The executor of the Worker guards every statement too; the test keeps the same order.
  const guard = checkReadOnlySql(sql, "sqlite");
  if (!guard.ok) return { ok: false, error: guard.error };
  executedSql.push(sql);
  try {
    return { ok: true, value: runSqliteQuery(db, guard.value.statement, maxRows) };
  } catch (e) {
    return { ok: false, error: { code: "sql_error", message: e instanceof Error ? e.message : String(e) } };
  }
}

interface Driven {
  run: Text2SqlRun;
  end: Text2SqlAction;
  stages: StageSpec[];
}

function drive(question: string, model: Model, config: Partial<Text2SqlRun["config"]> = {}, exec = execute): Driven {
  const start = newText2SqlRun({ question, database: "demo", schema, config: Text2SqlConfigSchema.parse(config) });
  let run = start.run;
  const stages: StageSpec[] = [];
  let action: Text2SqlAction = { kind: "stage", stage: start.first };
  for (let step = 0; step < 200; step++) {
    run = Text2SqlRunSchema.parse(JSON.parse(JSON.stringify(run)));
    if (action.kind === "stage") {
      stages.push(action.stage);
      action = onStageDone(run, action.stage.calls.map((c) => model(c.messages?.[0]?.content ?? "", c.step, c.maxTokens ?? 512)));
    } else if (action.kind === "execute") {
      const maxRows = action.maxRows;
      action = onExecuted(run, action.queries.map((q) => exec(q.sql, maxRows)));
    } else {
      return { run, end: action, stages };
    }
  }
  throw new Error("the run did not end within 200 steps");
}

/** The emulator's answers as it streams them: reasoning filler of the step's traced length, then the answer. */
const emulator = (seed: number, rate: number): Model => (prompt, _step, maxTokens) => (text2sqlPieces(prompt, seed, rate, maxTokens) ?? []).join("");

/** The emulator's answers except for one step, which the script replaces. */
const scripted = (overrides: Partial<Record<string, (prompt: string) => string>>, rate = 0): Model => (prompt, step) =>
  overrides[step]?.(prompt) ?? text2sqlAnswer(prompt, 1, rate) ?? "";

describe("text2sql run on the demo database with the emulator's answers", () => {
  it("answers every demo question with executable SQL or fails with every candidate's error, within bounded stages", () => {
    let answered = 0;
    let corrected = 0;
    for (const [i, q] of questions.entries()) {
      const { run, end, stages } = drive(q.question, emulator(i + 1, 0.3), { candidates: 3, maxRounds: 3 });
      expect(["done", "failed"]).toContain(end.kind);
      // 3 routings + keywords + selection + candidates + at most 3 revise + 3 routings, unit test, evaluate.
      expect(stages.length).toBeLessThanOrEqual(15);
      expect(stages.filter((s) => s.step === STEP.revise).length).toBe(run.rounds);
      if (end.kind === "done") {
        answered++;
        expect(run.answer?.sql).toBeDefined();
        expect(execute(run.answer?.sql ?? "", 1).ok).toBe(true);
      } else {
        expect(end).toMatchObject({ kind: "failed", error: { code: "no_executable_candidate" } });
      }
      if (run.rounds > 0) corrected++;
    }
    expect(answered).toBeGreaterThanOrEqual(25);
    expect(corrected).toBeGreaterThan(0);
  });

  it("runs the CHESS stage order: routers around keywords and selection, candidates, then testing when they differ", () => {
    const { run, stages } = drive(questions[4]?.question ?? "", emulator(7, 0), { candidates: 2 });
    expect(stages.slice(0, 6).map((s) => s.step)).toEqual([
      STEP.retriever, STEP.keywords, STEP.retriever, "select_schema", STEP.retriever, STEP.candidate,
    ]);
    expect(stages[5]?.calls).toHaveLength(2);
    expect(run.linked?.tables.length).toBeLessThan(schema.tables.length);
    expect(run.keywords.length).toBeGreaterThan(0);
    if (new Set(run.candidates.map((c) => c.attempts.at(-1)?.sql)).size > 1) {
      expect(stages.map((s) => s.step)).toContain(STEP.evaluate);
      expect(run.tests.length).toBeGreaterThan(0);
    }
  });
});

describe("self-correction", () => {
  const broken = () => "```sql\nSELECT nosuch_col FROM stores\n```";

  it("ends at the round limit with every attempt's error, and the run fails with the reason", () => {
    const { run, end, stages } = drive("How many stores?", scripted({ [STEP.candidate]: broken, [STEP.revise]: broken }), { candidates: 2, maxRounds: 2 });
    expect(stages.filter((s) => s.step === STEP.revise)).toHaveLength(2);
    expect(run.rounds).toBe(2);
    for (const c of run.candidates) {
      expect(c.attempts).toHaveLength(3);
      expect(c.attempts.every((a) => a.status === "error" && /no such column/i.test(a.error ?? ""))).toBe(true);
    }
    expect(end).toMatchObject({ kind: "failed", error: { code: "no_executable_candidate" } });
  });

  it("sends the exact execution error to the revise call and stops once the query runs", () => {
    let revisePrompt = "";
    const { run, end } = drive("How many stores?", scripted({
      [STEP.candidate]: broken,
      [STEP.revise]: (p) => {
        revisePrompt = p;
        return "```sql\nSELECT COUNT(*) FROM stores\n```";
      },
    }), { candidates: 1, maxRounds: 3 });
    expect(revisePrompt).toMatch(/no such column: nosuch_col/);
    expect(run.rounds).toBe(1);
    expect(end.kind).toBe("done");
    expect(run.answer?.rows).toEqual([[12]]);
  });

  it("revises an empty result, and stops when the model keeps the same query", () => {
    const empty = () => "```sql\nSELECT name FROM stores WHERE city = 'Atlantis'\n```";
    const { run, end } = drive("Which stores are in Atlantis?", scripted({ [STEP.candidate]: empty, [STEP.revise]: empty }), { candidates: 1, maxRounds: 5 });
    expect(run.rounds).toBe(1);
    expect(run.candidates[0]?.settled).toBe(true);
    expect(end.kind).toBe("done");
    expect(run.answer?.rows).toEqual([]);
  });

  it("never executes a statement that is not read-only, whatever the model wrote", () => {
    executedSql.length = 0;
    const hostile = () => "```sql\nDELETE FROM stores\n```";
    const { run, end } = drive("Remove the stores", scripted({ [STEP.candidate]: hostile, [STEP.revise]: hostile }), { candidates: 1, maxRounds: 1 });
    expect(executedSql.some((s) => /delete/i.test(s))).toBe(false);
    expect(run.candidates[0]?.attempts[0]?.error).toMatch(/read-only|not allowed|DELETE/i);
    expect(end.kind).toBe("failed");
    expect(db.exec("SELECT COUNT(*) FROM stores")[0]?.values[0]?.[0]).toBe(12);
  });

  it("zero rounds turns self-correction off", () => {
    const { run, stages } = drive("How many stores?", scripted({ [STEP.candidate]: broken }), { candidates: 1, maxRounds: 0 });
    expect(stages.some((s) => s.step === STEP.revise)).toBe(false);
    expect(run.candidates[0]?.attempts).toHaveLength(1);
  });
});

describe("answers that do not parse never stall a run", () => {
  it("a rambling router falls back to the next tool; a junk schema selection keeps the whole schema", () => {
    const { run, end } = drive("How many stores are there?", scripted({
      [STEP.retriever]: () => "I think we should look at things.",
      select_schema: () => "the stores table, probably",
    }));
    expect(run.retrieval).toEqual([STEP.keywords, "select_schema"]);
    expect(run.linked).toBeUndefined();
    expect(run.notes.some((n) => /no `next: <tool name>`/.test(n))).toBe(true);
    expect(end.kind).toBe("done");
  });

  it("a router that repeats a tool ends the routing instead of looping", () => {
    const { stages } = drive("How many stores?", scripted({ [STEP.retriever]: () => `next: ${STEP.keywords}` }));
    expect(stages.filter((s) => s.step === STEP.keywords)).toHaveLength(1);
    expect(stages.filter((s) => s.step === STEP.retriever)).toHaveLength(2);
  });

  it("an unreachable database fails the run with that reason at once", () => {
    const down = (): ExecOutcome => ({ ok: false, error: { code: "database_unavailable", message: "connection refused" } });
    const { end } = drive("How many stores?", emulator(1, 0), {}, down);
    expect(end).toMatchObject({ kind: "failed", error: { code: "database_unavailable" } });
  });

  it("every prompt carries its step's task marker, which the emulator and the logs key on", () => {
    const { stages } = drive(questions[0]?.question ?? "", emulator(3, 0.3), { candidates: 2 });
    for (const s of stages) for (const c of s.calls) expect(c.messages?.[0]?.content.startsWith(taskLine(s.step))).toBe(true);
  });
});

describe("the budget's template", () => {
  it("expects every allowed revise round, and drops the unused ones when testing starts", () => {
    const config = Text2SqlConfigSchema.parse({ maxRounds: 3 });
    const plan = newPlan(text2sqlTemplate(config));
    for (const s of [STEP.retriever, STEP.keywords, STEP.retriever, "select_schema", STEP.retriever, STEP.candidate]) cursorPlanner.onRelease(plan, s);
    expect(cursorPlanner.onRelease(plan, STEP.revise).filter((s) => s === STEP.revise)).toHaveLength(2);
    expect(cursorPlanner.onRelease(plan, STEP.unitTester)).toEqual([STEP.unitTest, STEP.unitTester, STEP.evaluate, STEP.unitTester]);
  });
});
