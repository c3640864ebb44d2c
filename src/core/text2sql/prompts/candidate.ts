/**
 * The generate_candidate call: one SQL query for the question over the linked schema. Several run in
 * parallel; their diversity comes from sampling, so the prompt is the same for each.
 */
import { STEP } from "../../chess";
import type { DatabaseSchema } from "../../db-schema";
import type { SqlDialect } from "../../sql-dialect";
import { joinPrompt, questionSection, schemaSection, type ParseResult } from "../format";
import { parseSql } from "../sql-answer";

export interface CandidateInput {
  question: string;
  hint?: string;
  /** Only the linked tables (see linkedSchema): the whole schema would dominate the prompt. */
  schema: DatabaseSchema;
  /** Which of the parallel candidates this is: tells the model to answer independently, so the candidates differ. */
  variant?: { index: number; of: number };
}

const DIALECT_NAME: Record<SqlDialect, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

/** The rules every SQL-writing prompt states, so a query that follows them passes the read-only guard. */
export function sqlRules(dialect: SqlDialect): string {
  return [
    "### rules",
    `- Write one ${DIALECT_NAME[dialect]} query: a single SELECT (or WITH ... SELECT) statement, no other statements.`,
    "- Use only the tables and columns in the schema, spelled and quoted as there.",
    "- Return only the columns the question asks for, in the order it asks for them.",
  ].join("\n");
}

export const SQL_ANSWER_FORMAT = "### answer format\nYou may reason first. End with the final query in one fenced block:\n```sql\nSELECT ...\n```";

export function buildCandidatePrompt(input: CandidateInput): string {
  return joinPrompt(STEP.candidate, [
    "Write a SQL query that answers the question over the database schema below.",
    questionSection(input.question, input.hint),
    schemaSection(input.schema),
    ...(input.variant !== undefined && input.variant.of > 1 ? [variantSection(input.variant)] : []),
    sqlRules(input.schema.dialect),
    SQL_ANSWER_FORMAT,
  ]);
}

function variantSection(v: { index: number; of: number }): string {
  return `### attempt\nThis is candidate ${v.index + 1} of ${v.of}, written independently of the others: where the ` +
    "question allows more than one reasonable reading or query shape, choose your own.";
}

/** The candidate's SQL (last ```sql block), checked read-only; see parseSql. */
export function parseCandidate(text: string, dialect: SqlDialect = "sqlite"): ParseResult<string> {
  return parseSql(text, dialect, STEP.candidate);
}
