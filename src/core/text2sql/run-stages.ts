/**
 * The stages a Text-to-SQL run releases, built from its state: each is one prompt file's builder turned
 * into calls the scheduler can price (input tokens from the prompt text, max_tokens per step).
 */
import { STEP } from "../chess";
import { estimateTokens } from "../dag-workflow";
import type { DatabaseSchema } from "../db-schema";
import type { StageSpec } from "../workflow";
import { buildCandidatePrompt } from "./prompts/candidate";
import { buildEvaluatePrompt } from "./prompts/evaluate";
import { buildKeywordsPrompt } from "./prompts/keywords";
import { buildRevisePrompt, type ReviseProblem } from "./prompts/revise";
import { RETRIEVER_TOOLS, UNIT_TESTER_TOOLS, buildRouterPrompt } from "./prompts/router";
import { SCHEMA_SELECTION_STEP, buildSchemaLinkingPrompt } from "./prompts/schema-linking";
import { buildUnitTestPrompt, type CandidateView } from "./prompts/unit-test";
import { PREVIEW_ROWS, STEP_MAX_TOKENS, type CandidateState, type Text2SqlRun } from "./run-state";

const FALLBACK_MAX_TOKENS = 512;
const CANDIDATE_TEMPERATURE = 0.7;

/**
 * Calls go out as one user message, so vLLM applies the served model's chat template (instruction-tuned
 * models answer formats far better that way than from a raw completion prompt). Only candidates sample:
 * their diversity is the point of having several; every other step wants its most likely answer.
 */
function stage(step: string, prompts: readonly string[]): StageSpec {
  const maxTokens = STEP_MAX_TOKENS[step] ?? FALLBACK_MAX_TOKENS;
  const temperature = step === STEP.candidate ? CANDIDATE_TEMPERATURE : 0;
  return {
    step,
    calls: prompts.map((prompt) => ({
      step, inputTokens: estimateTokens(prompt), outputTokens: maxTokens, maxTokens,
      messages: [{ role: "user" as const, content: prompt }], sampling: { temperature },
    })),
  };
}

const hintOf = (run: Text2SqlRun) => (run.hint === undefined ? {} : { hint: run.hint });
export const workingSchema = (run: Text2SqlRun): DatabaseSchema => run.linked ?? run.schema;
export const lastAttempt = (c: CandidateState) => c.attempts.at(-1);

export function retrievalRouterStage(run: Text2SqlRun): StageSpec {
  return stage(STEP.retriever, [buildRouterPrompt({ agent: STEP.retriever, question: run.question, tools: RETRIEVER_TOOLS, done: run.retrieval })]);
}

export function testingRouterStage(run: Text2SqlRun): StageSpec {
  return stage(STEP.unitTester, [buildRouterPrompt({ agent: STEP.unitTester, question: run.question, tools: UNIT_TESTER_TOOLS, done: run.testing })]);
}

export function keywordsStage(run: Text2SqlRun): StageSpec {
  return stage(STEP.keywords, [buildKeywordsPrompt({ question: run.question, ...hintOf(run) })]);
}

export function schemaSelectionStage(run: Text2SqlRun): StageSpec {
  return stage(SCHEMA_SELECTION_STEP, [buildSchemaLinkingPrompt({ question: run.question, ...hintOf(run), schema: run.schema, keywords: run.keywords })]);
}

export function candidatesStage(run: Text2SqlRun): StageSpec {
  const of = run.config.candidates;
  const prompts = Array.from({ length: of }, (_, index) =>
    buildCandidatePrompt({ question: run.question, ...hintOf(run), schema: workingSchema(run), variant: { index, of } }),
  );
  return stage(STEP.candidate, prompts);
}

const NO_SQL = "-- (the previous answer contained no SQL query)";

export function reviseStage(run: Text2SqlRun, indices: readonly number[]): StageSpec {
  const prompts = indices.map((i) => {
    const last = run.candidates[i]?.attempts.at(-1);
    const problem: ReviseProblem = last?.status === "empty" ? { kind: "empty" } : { kind: "error", message: last?.error ?? "unknown error" };
    return buildRevisePrompt({ question: run.question, ...hintOf(run), schema: workingSchema(run), sql: last?.sql ?? NO_SQL, problem });
  });
  return stage(STEP.revise, prompts);
}

function view(c: CandidateState): CandidateView {
  const last = lastAttempt(c);
  const result = last?.status === "empty" ? "(no rows)" : c.preview;
  return { sql: last?.sql ?? "", ...(result === undefined ? {} : { result }) };
}

export function unitTestStage(run: Text2SqlRun, indices: readonly number[]): StageSpec {
  const candidates = indices.flatMap((i) => (run.candidates[i] === undefined ? [] : [view(run.candidates[i])]));
  return stage(STEP.unitTest, [buildUnitTestPrompt({ question: run.question, ...hintOf(run), schema: workingSchema(run), candidates, count: run.config.tests })]);
}

export function evaluateStage(run: Text2SqlRun, indices: readonly number[]): StageSpec {
  const prompts = indices.flatMap((i) => {
    const c = run.candidates[i];
    return c === undefined ? [] : [buildEvaluatePrompt({ question: run.question, ...hintOf(run), schema: workingSchema(run), candidate: view(c), tests: run.tests })];
  });
  return stage(STEP.evaluate, prompts);
}

const MAX_CELL_CHARS = 60;
const MAX_LINE_CHARS = 240;

function cell(v: unknown): string {
  const s = v === null || v === undefined ? "NULL" : typeof v === "string" ? v : JSON.stringify(v);
  return s.length > MAX_CELL_CHARS ? `${s.slice(0, MAX_CELL_CHARS - 1)}…` : s;
}

/** The first rows of a result as a small pipe-separated table: what a model can read in a prompt. */
export function previewRows(columns: readonly string[], rows: readonly (readonly unknown[])[], more: boolean): string {
  const lines = [columns.join(" | "), ...rows.slice(0, PREVIEW_ROWS).map((r) => r.map(cell).join(" | "))];
  if (more || rows.length > PREVIEW_ROWS) lines.push("…");
  return lines.map((l) => (l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS - 1)}…` : l)).join("\n");
}
