/**
 * The CHESS-style Text-to-SQL workflow as a state machine: routers decide the schema-linking and testing
 * tools, candidates are generated in parallel, each is executed and revised with its exact error (or its
 * empty result) up to a round limit, then unit tests and evaluations choose the answer, which is executed
 * once more with the row cap. The shell (a Durable Object) releases the stages and runs the queries; every
 * decision is here, pure, so a test can drive a whole run without a database or a GPU.
 *
 * Nothing a model writes can stall or break a run: an answer that does not parse becomes a note and the
 * run goes on with a safe default (the next tool, the whole schema, no tests), and every loop is bounded
 * (each router tool runs once; revise rounds stop at the limit).
 */
import { STEP } from "../chess";
import type { DatabaseSchema } from "../db-schema";
import type { StageSpec } from "../workflow";
import { parseCandidate } from "./prompts/candidate";
import { parseEvaluation } from "./prompts/evaluate";
import { parseKeywords } from "./prompts/keywords";
import { parseRevise } from "./prompts/revise";
import { ROUTER_DONE, RETRIEVER_TOOLS, UNIT_TESTER_TOOLS, parseRouter, type RouterAgent, type RouterTool } from "./prompts/router";
import { SCHEMA_SELECTION_STEP, linkedSchema, parseSchemaLinking } from "./prompts/schema-linking";
import { parseUnitTests } from "./prompts/unit-test";
import { PREVIEW_ROWS, toCell, type CandidateState, type Text2SqlConfig, type Text2SqlRun } from "./run-state";
import {
  candidatesStage, evaluateStage, keywordsStage, lastAttempt, previewRows, retrievalRouterStage, reviseStage,
  schemaSelectionStage, testingRouterStage, unitTestStage,
} from "./run-stages";
import { selectWinner } from "./select";

/** What running one query gave; the Worker's executor returns this shape (src/core/database.ts). */
export type ExecOutcome =
  | { ok: true; value: { columns: string[]; rows: unknown[][]; truncated: boolean; elapsedMs?: number } }
  | { ok: false; error: { code: string; message: string } };

export type Text2SqlAction =
  | { kind: "stage"; stage: StageSpec }
  | { kind: "execute"; queries: { index: number; sql: string }[]; maxRows: number }
  | { kind: "done" }
  | { kind: "failed"; error: { code: string; message: string } };

export interface Text2SqlInput {
  question: string;
  hint?: string;
  database: string;
  schema: DatabaseSchema;
  config: Text2SqlConfig;
}

export function newText2SqlRun(input: Text2SqlInput): { run: Text2SqlRun; first: StageSpec } {
  const run: Text2SqlRun = {
    question: input.question, ...(input.hint === undefined ? {} : { hint: input.hint }), database: input.database,
    schema: input.schema, config: input.config, phase: "route_retrieval", retrieval: [], testing: [], keywords: [],
    candidates: [], tests: [], inStage: [], rounds: 0, notes: [],
  };
  return { run, first: retrievalRouterStage(run) };
}

const stageAction = (stage: StageSpec): Text2SqlAction => ({ kind: "stage", stage });

/** The router's choice; an unparseable answer takes the first tool not yet run, and a repeated tool ends the routing. */
function route(run: Text2SqlRun, agent: RouterAgent, tools: readonly RouterTool[], done: readonly string[], text: string): string {
  const parsed = parseRouter(text, agent, tools);
  const fallback = tools.find((t) => !done.includes(t.name))?.name ?? ROUTER_DONE;
  if (!parsed.ok) run.notes.push(`${parsed.error.message}; went on with ${fallback}`);
  const next = parsed.ok ? parsed.value.next : fallback;
  return done.includes(next) ? ROUTER_DONE : next;
}

/** Feeds the texts of the stage that just finished (in call order) and says what to do next. */
export function onStageDone(run: Text2SqlRun, outputs: readonly string[]): Text2SqlAction {
  const text = outputs[0] ?? "";
  switch (run.phase) {
    case "route_retrieval": {
      const next = route(run, STEP.retriever, RETRIEVER_TOOLS, run.retrieval, text);
      if (next === STEP.keywords) return to(run, "keywords", keywordsStage(run));
      if (next === SCHEMA_SELECTION_STEP) return to(run, "select_schema", schemaSelectionStage(run));
      return to(run, "candidates", candidatesStage(run));
    }
    case "keywords": {
      const k = parseKeywords(text);
      if (k.ok) run.keywords = k.value;
      else run.notes.push(k.error.message);
      run.retrieval.push(STEP.keywords);
      return to(run, "route_retrieval", retrievalRouterStage(run));
    }
    case "select_schema":
      selectSchema(run, text);
      run.retrieval.push(SCHEMA_SELECTION_STEP);
      return to(run, "route_retrieval", retrievalRouterStage(run));
    case "candidates":
      run.candidates = outputs.map((_, index): CandidateState => ({ index, attempts: [], verdicts: [], settled: false }));
      return queueSql(run, outputs.map((o, k) => ({ index: k, text: o })));
    case "revise":
      return queueSql(run, run.inStage.map((index, k) => ({ index, text: outputs[k] ?? "" })));
    case "route_testing":
      return routeTesting(run, text);
    case "unit_test": {
      const t = parseUnitTests(text);
      if (t.ok) run.tests = t.value.slice(0, run.config.tests);
      else run.notes.push(t.error.message);
      run.testing.push(STEP.unitTest);
      return to(run, "route_testing", testingRouterStage(run));
    }
    case "evaluate":
      recordVerdicts(run, outputs);
      run.testing.push(STEP.evaluate);
      return to(run, "route_testing", testingRouterStage(run));
    case "final":
    case "done":
      return { kind: "failed", error: { code: "internal", message: `no stage was expected in phase ${run.phase}` } };
  }
}

function to(run: Text2SqlRun, phase: Text2SqlRun["phase"], stage: StageSpec): Text2SqlAction {
  run.phase = phase;
  return stageAction(stage);
}

function selectSchema(run: Text2SqlRun, text: string): void {
  const s = parseSchemaLinking(text);
  if (!s.ok) {
    run.notes.push(`${s.error.message}; the candidates see the whole schema`);
    return;
  }
  const linked = linkedSchema(run.schema, s.value);
  if (linked.unknown.length > 0) run.notes.push(`schema selection named what the schema does not have: ${linked.unknown.join(", ")}`);
  if (linked.schema.tables.length === 0) run.notes.push("schema selection kept no table; the candidates see the whole schema");
  else run.linked = linked.schema;
}

/** Parses each answer's SQL; a refused or missing query is recorded as that attempt's error without running it. */
function queueSql(run: Text2SqlRun, answers: readonly { index: number; text: string }[]): Text2SqlAction {
  const queries: { index: number; sql: string }[] = [];
  for (const { index, text } of answers) {
    const c = run.candidates[index];
    if (c === undefined) continue;
    const round = c.attempts.length;
    const parsed = round === 0 ? parseCandidate(text, run.schema.dialect) : parseRevise(text, run.schema.dialect);
    if (!parsed.ok) {
      c.attempts.push({ round, status: "error", error: parsed.error.message });
      continue;
    }
    const previous = lastAttempt(c);
    // The revise prompt allows keeping a query whose empty result is right; asking again would loop.
    if (previous?.status === "empty" && previous.sql === parsed.value) c.settled = true;
    queries.push({ index, sql: parsed.value });
  }
  if (queries.length === 0) return afterCorrection(run);
  run.pendingQueries = queries;
  return { kind: "execute", queries, maxRows: PREVIEW_ROWS };
}

/** Feeds the results of the queries the last `execute` action asked for, in the same order. */
export function onExecuted(run: Text2SqlRun, results: readonly ExecOutcome[]): Text2SqlAction {
  const queries = run.pendingQueries ?? [];
  delete run.pendingQueries;
  const unavailable = results.find((r) => !r.ok && r.error.code === "database_unavailable");
  if (unavailable !== undefined && !unavailable.ok) {
    run.phase = "done";
    return { kind: "failed", error: { code: "database_unavailable", message: `database "${run.database}": ${unavailable.error.message}` } };
  }
  if (run.phase === "final") return finalAnswer(run, queries[0], results[0]);
  queries.forEach((q, k) => {
    const c = run.candidates[q.index];
    const r = results[k];
    if (c === undefined || r === undefined) return;
    const round = c.attempts.length;
    if (!r.ok) {
      c.attempts.push({ round, sql: q.sql, status: "error", error: r.error.message });
      return;
    }
    const elapsed = r.value.elapsedMs === undefined ? {} : { elapsedMs: r.value.elapsedMs };
    c.attempts.push({ round, sql: q.sql, status: r.value.rows.length > 0 ? "ok" : "empty", ...elapsed });
    c.preview = previewRows(r.value.columns, r.value.rows, r.value.truncated);
  });
  return afterCorrection(run);
}

/** Another revise round for every candidate that failed or came back empty, until the round limit. */
function afterCorrection(run: Text2SqlRun): Text2SqlAction {
  const needy = run.candidates.filter((c) => {
    const last = lastAttempt(c);
    return last !== undefined && last.status !== "ok" && !c.settled && c.attempts.length - 1 < run.config.maxRounds;
  });
  if (needy.length > 0) {
    run.rounds += 1;
    run.inStage = needy.map((c) => c.index);
    return to(run, "revise", reviseStage(run, run.inStage));
  }
  return startTesting(run);
}

const executed = (c: CandidateState) => lastAttempt(c)?.status !== "error" && lastAttempt(c) !== undefined;

/** One executable candidate per distinct query: testing tells different queries apart, not copies. */
function distinctExecutable(run: Text2SqlRun): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const c of run.candidates) {
    const sql = lastAttempt(c)?.sql;
    if (!executed(c) || sql === undefined || seen.has(sql)) continue;
    seen.add(sql);
    out.push(c.index);
  }
  return out;
}

/** Testing only runs when there is a choice to make: two or more different queries that execute. */
function startTesting(run: Text2SqlRun): Text2SqlAction {
  if (distinctExecutable(run).length < 2) return finalize(run);
  return to(run, "route_testing", testingRouterStage(run));
}

function routeTesting(run: Text2SqlRun, text: string): Text2SqlAction {
  const next = route(run, STEP.unitTester, UNIT_TESTER_TOOLS, run.testing, text);
  const choices = distinctExecutable(run);
  if (next === STEP.unitTest) return to(run, "unit_test", unitTestStage(run, choices));
  if (next === STEP.evaluate && run.tests.length > 0) {
    run.inStage = choices;
    return to(run, "evaluate", evaluateStage(run, choices));
  }
  return finalize(run);
}

/** Verdicts per evaluated query, shared by every candidate that ended with the same query. */
function recordVerdicts(run: Text2SqlRun, outputs: readonly string[]): void {
  run.inStage.forEach((index, k) => {
    const verdicts = parseEvaluation(outputs[k] ?? "", run.tests.length);
    if (!verdicts.ok) {
      run.notes.push(`candidate ${index}: ${verdicts.error.message}`);
      return;
    }
    const sql = run.candidates[index]?.attempts.at(-1)?.sql;
    for (const c of run.candidates) if (lastAttempt(c)?.sql === sql) c.verdicts = verdicts.value;
  });
}

function finalize(run: Text2SqlRun): Text2SqlAction {
  const selected = selectWinner(
    run.candidates.map((c) => {
      const last = lastAttempt(c);
      return {
        index: c.index,
        sql: last?.sql ?? "",
        execution: executed(c) ? { ok: true as const } : { ok: false as const, error: last?.error ?? "no attempt" },
        reviseRounds: Math.max(0, c.attempts.length - 1),
        verdicts: c.verdicts,
      };
    }),
  );
  if (!selected.ok) {
    run.phase = "done";
    return { kind: "failed", error: { code: selected.error.code, message: selected.error.message } };
  }
  run.phase = "final";
  run.pendingQueries = [{ index: selected.value.index, sql: selected.value.sql }];
  return { kind: "execute", queries: run.pendingQueries, maxRows: run.config.maxRows };
}

function finalAnswer(run: Text2SqlRun, query: { index: number; sql: string } | undefined, result: ExecOutcome | undefined): Text2SqlAction {
  run.phase = "done";
  if (query === undefined || result === undefined) return { kind: "failed", error: { code: "internal", message: "the final query's result is missing" } };
  if (!result.ok) return { kind: "failed", error: { code: result.error.code, message: `the chosen query failed when run again: ${result.error.message}` } };
  const passedTests = (run.candidates[query.index]?.verdicts ?? []).filter((v) => v).length;
  run.answer = { candidate: query.index, sql: query.sql, columns: result.value.columns, rows: result.value.rows.map((r) => r.map(toCell)), truncated: result.value.truncated, passedTests };
  return { kind: "done" };
}

/** The queries a run still waits for (after a restart, say), as the action that runs them; undefined when none. */
export function pendingExecution(run: Text2SqlRun): Text2SqlAction | undefined {
  if (run.pendingQueries === undefined) return undefined;
  return { kind: "execute", queries: run.pendingQueries, maxRows: run.phase === "final" ? run.config.maxRows : PREVIEW_ROWS };
}
