/**
 * Answers to the Text-to-SQL workflow's prompts (those whose first line is the task marker), in the
 * formats the prompt parsers in src/core/text2sql/prompts read. undefined for any other prompt.
 */
import { STEP } from "../../core/chess";
import { fence, TASK_MARKER } from "../../core/text2sql/format";
import { ROUTER_DONE } from "../../core/text2sql/prompts/router";
import { SCHEMA_SELECTION_STEP } from "../../core/text2sql/prompts/schema-linking";
import { uniformInt, type Rng } from "../../core/rng";
import { TOKEN_FITS, drawTokens, type TokenDist } from "../../sim/synthetic";
import { syntheticTokens } from "../text";
import { readDdl, section } from "./ddl";
import { generateSql } from "./sql";
import { matchingColumns, promptRng, questionWords, rankTables, wordsOf } from "./words";

export const DEFAULT_SQL_ERROR_RATE = 0.3;

/** The step named on the prompt's first line, or undefined when the prompt is not a workflow prompt. */
export function taskOf(prompt: string): string | undefined {
  if (!prompt.startsWith(TASK_MARKER)) return undefined;
  return (prompt.split("\n")[0] ?? "").slice(TASK_MARKER.length).trim();
}

function router(prompt: string): string {
  const tools = (section(prompt, "### tools") ?? "")
    .split("\n")
    .map((l) => /^\s*-\s*([^:]+):/.exec(l)?.[1]?.trim())
    .filter((t): t is string => t !== undefined && t !== ROUTER_DONE);
  const progress = /Already run, in order: (.*)\.\s*$/m.exec(section(prompt, "### progress") ?? "")?.[1] ?? "";
  const done = new Set(progress.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  return `next: ${tools.find((t) => !done.has(t)) ?? ROUTER_DONE}`;
}

const FILLER = new Set(["the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "is", "are", "what", "which", "who",
  "how", "many", "much", "list", "show", "give", "me", "all", "each", "with", "by", "from", "that", "was", "were", "do", "does"]);

function keywords(prompt: string, rng: Rng): string {
  const question = (section(prompt, "### question") ?? "").split("\n")[0] ?? "";
  const words = [...new Set(wordsOf(question))].filter((w) => !FILLER.has(w));
  const picked = words.slice(0, 2 + uniformInt(rng, 3));
  return JSON.stringify(picked.length > 0 ? picked : ["value"]);
}

function schemaLinking(prompt: string, rng: Rng): string {
  const ranked = rankTables(readDdl(prompt), questionWords(prompt));
  const chosen = ranked.filter((r) => r.score > 0).slice(0, 1 + uniformInt(rng, 3));
  const picks = (chosen.length > 0 ? chosen : ranked.slice(0, 1)).map((r) => r.table);
  const tables: Record<string, string[]> = {};
  for (const t of picks) tables[t.name] = [...new Set([t.columns[0] ?? "", ...matchingColumns(t, questionWords(prompt))])].filter((c) => c !== "");
  return JSON.stringify({ tables });
}

function unitTests(): string {
  return [
    "1. The result has one column for each attribute the question asks for, in the order asked.",
    "2. The query reads only the tables the question is about.",
    "3. The result is not empty when matching rows exist.",
  ].join("\n");
}

function evaluate(prompt: string, rng: Rng): string {
  const tests = [...(section(prompt, "### unit tests") ?? "").matchAll(/^test (\d+):/gm)].map((m) => Number(m[1]));
  return tests.map((n) => `test ${n}: ${rng.next() < 0.8 ? "PASS" : "FAIL"}`).join("\n");
}

export function text2sqlAnswer(prompt: string, seed: number, sqlErrorRate: number): string | undefined {
  const task = taskOf(prompt);
  if (task === undefined) return undefined;
  const rng = promptRng(seed, prompt);
  switch (task) {
    case STEP.retriever:
    case STEP.unitTester:
      return router(prompt);
    case STEP.keywords:
      return keywords(prompt, rng);
    case SCHEMA_SELECTION_STEP:
      return schemaLinking(prompt, rng);
    case STEP.candidate:
    case STEP.revise: {
      const rate = task === STEP.revise ? sqlErrorRate / 2 : sqlErrorRate;
      return fence("sql", generateSql(readDdl(prompt), questionWords(prompt), rate, rng));
    }
    case STEP.unitTest:
      return unitTests();
    case STEP.evaluate:
      return evaluate(prompt, rng);
    default:
      return undefined;
  }
}

/** The answer as token texts, one per ceil(characters / 4) token as src/emulator/text.ts counts them. */
export function answerPieces(answer: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < answer.length; i += 4) pieces.push(answer.slice(i, i + 4));
  return pieces;
}

/** Output lengths of the traces' steps (candidates: the first candidate's fit); selection has no trace of its own. */
const OUTPUT_FITS: Readonly<Record<string, TokenDist | undefined>> = {
  [STEP.retriever]: TOKEN_FITS[STEP.retriever]?.out,
  [STEP.unitTester]: TOKEN_FITS[STEP.unitTester]?.out,
  [STEP.keywords]: TOKEN_FITS[STEP.keywords]?.out,
  [STEP.candidate]: TOKEN_FITS["candidate#0"]?.out,
  [STEP.revise]: TOKEN_FITS[STEP.revise]?.out,
  [STEP.unitTest]: TOKEN_FITS[STEP.unitTest]?.out,
  [STEP.evaluate]: TOKEN_FITS[STEP.evaluate]?.out,
};

/**
 * The answer as tokens, after reasoning filler that brings the call to a length drawn from its step's
 * distribution in the traces (capped at max_tokens, so the answer itself always fits): the GPU time of an
 * emulated workflow is then that of a CHESS one. The filler is plain words with no brackets, fences,
 * numbered lines or `test N:` patterns, so every parser skips it as prose. undefined for other prompts.
 */
export function text2sqlPieces(prompt: string, seed: number, sqlErrorRate: number, maxTokens: number): string[] | undefined {
  const answer = text2sqlAnswer(prompt, seed, sqlErrorRate);
  if (answer === undefined) return undefined;
  const pieces = answerPieces(answer);
  const fit = OUTPUT_FITS[taskOf(prompt) ?? ""];
  if (fit === undefined) return pieces;
  const target = Math.min(drawTokens(promptRng(seed + 1, prompt), fit), maxTokens);
  const filler = target - pieces.length - 1;
  return filler > 0 ? [...syntheticTokens(seed, prompt, filler), "\n\n", ...pieces] : pieces;
}
