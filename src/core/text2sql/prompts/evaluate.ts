/**
 * An evaluate call: judges one candidate against every unit test. The calls run in parallel, one per
 * candidate, and select.ts turns their verdicts into the winner.
 */
import { STEP } from "../../chess";
import type { DatabaseSchema } from "../../db-schema";
import { extractJson, fence, joinPrompt, parsed, questionSection, schemaSection, unparseable, type ParseResult } from "../format";
import type { CandidateView } from "./unit-test";

export interface EvaluateInput {
  question: string;
  hint?: string;
  schema: DatabaseSchema;
  candidate: CandidateView;
  tests: readonly string[];
}

export function buildEvaluatePrompt(input: EvaluateInput): string {
  const candidate = [fence("sql", input.candidate.sql)];
  if (input.candidate.result !== undefined) candidate.push(`Result:\n${fence("text", input.candidate.result)}`);
  const tests = input.tests.map((t, i) => `test ${i + 1}: ${t}`).join("\n");
  const format = input.tests.map((_, i) => `test ${i + 1}: PASS`).join("\n");
  return joinPrompt(STEP.evaluate, [
    "Judge whether the SQL query below, and its result, pass each unit test for the question. A test passes " +
      "only if the query as written would satisfy it on any data, not just on this result.",
    questionSection(input.question, input.hint),
    schemaSection(input.schema),
    `### candidate\n${candidate.join("\n")}`,
    `### unit tests\n${tests}`,
    `### answer format\nYou may reason first. End with one line per test, PASS or FAIL, for example:\n${format}`,
  ]);
}

/** Verdicts from `test N: PASS|FAIL` lines; the last line for a test wins, since reasoning may come first. */
function fromLines(text: string): Map<number, boolean> {
  const verdicts = new Map<number, boolean>();
  for (const m of text.matchAll(/\btest\s*#?\s*(\d+)\s*\**\s*[:=-]\s*\**\s*(pass|fail)(?:ed|s)?\b/gi)) {
    verdicts.set(Number(m[1]), (m[2] ?? "").toLowerCase() === "pass");
  }
  return verdicts;
}

/** Verdicts from a JSON object such as {"1":"PASS","test 2":"FAIL"} or {"1":true}. */
function fromJson(text: string): Map<number, boolean> {
  const verdicts = new Map<number, boolean>();
  const found = extractJson(text, "{");
  if (typeof found !== "object" || found === null || Array.isArray(found)) return verdicts;
  for (const [key, value] of Object.entries(found)) {
    const n = /^\s*(?:test\s*)?(\d+)\s*$/i.exec(key)?.[1];
    if (n === undefined) continue;
    if (typeof value === "boolean") verdicts.set(Number(n), value);
    else if (typeof value === "string" && /^(pass|fail)$/i.test(value.trim())) verdicts.set(Number(n), /pass/i.test(value));
  }
  return verdicts;
}

/**
 * One verdict per test, in test order (true = passed). Every test must be judged: a missing verdict is an
 * error rather than a FAIL, because the caller cannot tell a skipped test from a failed one otherwise.
 */
export function parseEvaluation(text: string, testCount: number): ParseResult<boolean[]> {
  let verdicts = fromLines(text);
  if (verdicts.size === 0) verdicts = fromJson(text);
  if (verdicts.size === 0) return unparseable(STEP.evaluate, "no `test N: PASS|FAIL` lines or JSON verdicts in the answer");
  const result: boolean[] = [];
  const missing: number[] = [];
  for (let n = 1; n <= testCount; n++) {
    const v = verdicts.get(n);
    if (v === undefined) missing.push(n);
    else result.push(v);
  }
  if (missing.length > 0) return unparseable(STEP.evaluate, `no verdict for test ${missing.join(", ")} of ${testCount}`);
  return parsed(result);
}
