/**
 * The generate_unit_test call: natural-language checks that a correct answer to the question must pass,
 * written to tell the candidates apart. Its answer is a numbered list.
 */
import { STEP } from "../../chess";
import type { DatabaseSchema } from "../../db-schema";
import { fence, joinPrompt, parsed, questionSection, schemaSection, unparseable, type ParseResult } from "../format";

/** A candidate as the tester and the evaluator see it: its SQL and a preview of what it returned. */
export interface CandidateView {
  sql: string;
  /** A few result rows rendered as text, or the last error; omitted when not available. */
  result?: string;
}

export interface UnitTestInput {
  question: string;
  hint?: string;
  schema: DatabaseSchema;
  candidates: readonly CandidateView[];
  /** How many tests to ask for. */
  count: number;
}

/** The candidates as numbered sections; shared with the evaluate prompt so both calls see the same text. */
export function candidatesSection(candidates: readonly CandidateView[]): string {
  return candidates
    .map((c, i) => {
      const parts = [`### candidate ${i + 1}`, fence("sql", c.sql)];
      if (c.result !== undefined) parts.push(`Result:\n${fence("text", c.result)}`);
      return parts.join("\n");
    })
    .join("\n\n");
}

export function buildUnitTestPrompt(input: UnitTestInput): string {
  return joinPrompt(STEP.unitTest, [
    `Write ${input.count} unit tests for the question below: short statements, in plain language, that the ` +
      "result of a correct SQL query must satisfy (which rows, which columns, ordering, how many rows, how ties " +
      "or missing values are handled). Prefer tests on which the candidate queries below would disagree.",
    questionSection(input.question, input.hint),
    schemaSection(input.schema),
    candidatesSection(input.candidates),
    `### answer format\nReply with a numbered list, one test per line, and nothing else:\n1. <test>\n2. <test>`,
  ]);
}

/**
 * The tests in list order. Numbered lines (`1.`, `2)`, `**3.**`) are tests; an indented line under one
 * continues it; other prose is ignored; when numbering restarts, the last list wins. No numbered line is an error.
 */
export function parseUnitTests(text: string): ParseResult<string[]> {
  let tests: string[] = [];
  let continuing = false;
  let previous = 0;
  for (const line of text.split(/\r?\n/)) {
    const item = /^\s*(?:\*\*)?(\d+)\s*[.)](?:\*\*)?\s+(.*\S)\s*$/.exec(line);
    if (item?.[2] !== undefined) {
      const n = Number(item[1]);
      // A list restarting at 1 after 2+ is the final answer following numbered reasoning ("1. 1. 1." is one list).
      if (n === 1 && previous > 1) tests = [];
      previous = n;
      tests.push(item[2].replace(/^\*\*\s*|\s*\*\*$/g, ""));
      continuing = true;
    } else if (continuing && /^\s{2,}\S/.test(line) && tests.length > 0) {
      tests[tests.length - 1] = `${tests.at(-1) ?? ""} ${line.trim()}`;
    } else {
      continuing = false;
    }
  }
  if (tests.length === 0) return unparseable(STEP.unitTest, "no numbered list of tests in the answer");
  return parsed(tests);
}
