/**
 * The revise call of self-correction: a candidate's SQL failed (an error, a guard refusal) or returned no
 * rows, and the model gets the SQL and the exact problem back to write a fixed query.
 */
import { STEP } from "../../chess";
import type { DatabaseSchema } from "../../db-schema";
import type { SqlDialect } from "../../sql-dialect";
import { fence, joinPrompt, questionSection, schemaSection, type ParseResult } from "../format";
import { parseSql } from "../sql-answer";
import { SQL_ANSWER_FORMAT, sqlRules } from "./candidate";

/** What went wrong with the previous SQL. */
export type ReviseProblem = { kind: "error"; message: string } | { kind: "empty" };

export interface ReviseInput {
  question: string;
  hint?: string;
  /** The linked schema, as the candidate saw it. */
  schema: DatabaseSchema;
  sql: string;
  problem: ReviseProblem;
}

function problemSection(problem: ReviseProblem): string {
  // The error goes in verbatim inside a fence: its exact wording (a column name, a position) is the clue.
  if (problem.kind === "error") return `### problem\nRunning the query failed with this error:\n${fence("text", problem.message)}`;
  return "### problem\nThe query ran but returned no rows. Check the filters, the join conditions and how values " +
    "are spelled in the data; if no rows is truly the right answer, return the query unchanged.";
}

export function buildRevisePrompt(input: ReviseInput): string {
  return joinPrompt(STEP.revise, [
    "A SQL query written for the question below did not work. Find the cause and write a corrected query.",
    questionSection(input.question, input.hint),
    schemaSection(input.schema),
    `### previous query\n${fence("sql", input.sql)}`,
    problemSection(input.problem),
    sqlRules(input.schema.dialect),
    SQL_ANSWER_FORMAT,
  ]);
}

/** The fixed SQL (last ```sql block), checked read-only; see parseSql. */
export function parseRevise(text: string, dialect: SqlDialect = "sqlite"): ParseResult<string> {
  return parseSql(text, dialect, STEP.revise);
}
