/**
 * The persisted state of one Text-to-SQL workflow run (plain data: a Durable Object stores it as JSON),
 * its configuration, and the step template its SLO budget is planned on.
 */
import { z } from "zod";
import { STEP } from "../chess";
import { DatabaseSchemaSchema } from "../db-schema";
import { LIMITS } from "../limits";
import { SCHEMA_SELECTION_STEP } from "./prompts/schema-linking";

const B = LIMITS.text2sql;

/** Every knob of the workflow, with the defaults a request gets when it names none (bounds: LIMITS.text2sql). */
export const Text2SqlConfigSchema = z.strictObject({
  /** Parallel candidate generations (the traces have 2). */
  candidates: z.number().int().min(B.candidates.min).max(B.candidates.max).default(2),
  /** Self-correction rounds per candidate at most; 0 turns self-correction off. */
  maxRounds: z.number().int().min(B.maxRounds.min).max(B.maxRounds.max).default(3),
  /** Unit tests asked of the generate_unit_test call. */
  tests: z.number().int().min(B.tests.min).max(B.tests.max).default(3),
  /** Rows the answer carries at most (the query's own result may be longer: `truncated` says so). */
  maxRows: z.number().int().min(B.maxRows.min).max(B.maxRows.max).default(100),
});
export type Text2SqlConfig = z.infer<typeof Text2SqlConfigSchema>;

/** How long one generated query may run; agents write slow joins, and a hung query must not hold the workflow. */
export const STATEMENT_TIMEOUT_MS = 10_000;
/** Rows of a candidate's result shown to the tester and the evaluator. */
export const PREVIEW_ROWS = 5;

/** The max_tokens of each step: enough for the answer format plus some reasoning, never unbounded. */
export const STEP_MAX_TOKENS: Readonly<Record<string, number>> = {
  [STEP.retriever]: 32,
  [STEP.unitTester]: 32,
  [STEP.keywords]: 256,
  [SCHEMA_SELECTION_STEP]: 512,
  [STEP.candidate]: 1024,
  [STEP.revise]: 1024,
  [STEP.unitTest]: 512,
  [STEP.evaluate]: 384,
};

/**
 * The stages the budget expects (DESIGN section 2): three retriever routings around keywords and schema
 * selection, the candidates, every allowed revise round, then testing. The cursor planner drops the
 * unused revise rounds the moment testing starts, so the loop's real length is what the budget ends up with.
 */
export function text2sqlTemplate(config: Text2SqlConfig): string[] {
  return [
    STEP.retriever, STEP.keywords, STEP.retriever, SCHEMA_SELECTION_STEP, STEP.retriever,
    STEP.candidate,
    ...Array.from({ length: config.maxRounds }, () => STEP.revise),
    STEP.unitTester, STEP.unitTest, STEP.unitTester, STEP.evaluate, STEP.unitTester,
  ];
}

/** One execution of a candidate's SQL (or the model's failure to write any). */
export const AttemptSchema = z.object({
  /** 0 for the candidate itself, then one per revise round. */
  round: z.number().int().nonnegative(),
  sql: z.string().optional(),
  /** "ok": rows came back; "empty": it ran and returned none; "error": it did not run (or no SQL was found). */
  status: z.enum(["ok", "empty", "error"]),
  error: z.string().optional(),
  rowCount: z.number().int().nonnegative().optional(),
  elapsedMs: z.number().nonnegative().optional(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

export const CandidateStateSchema = z.object({
  index: z.number().int().nonnegative(),
  attempts: z.array(AttemptSchema),
  /** A few rows of the last result as text, for the unit-test and evaluate prompts. */
  preview: z.string().optional(),
  /** One per unit test once evaluated; empty when it was not (or its verdict did not parse). */
  verdicts: z.array(z.boolean()),
  /** True once revising it again would not help: the model returned the same query for an empty result. */
  settled: z.boolean(),
});
export type CandidateState = z.infer<typeof CandidateStateSchema>;

const QuerySchema = z.object({ index: z.number().int(), sql: z.string() });

export const PhaseSchema = z.enum([
  "route_retrieval", "keywords", "select_schema", "candidates", "revise",
  "route_testing", "unit_test", "evaluate", "final", "done",
]);
export type Phase = z.infer<typeof PhaseSchema>;

/** A result cell as the answer stores it: a JSON scalar (a blob or anything else arrives as text). */
export const SqlCellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type SqlCell = z.infer<typeof SqlCellSchema>;

export function toCell(v: unknown): SqlCell {
  if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  if (v === undefined) return null;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  return JSON.stringify(v) ?? String(v);
}

export const Text2SqlRunSchema = z.object({
  question: z.string(),
  hint: z.string().optional(),
  database: z.string(),
  schema: DatabaseSchemaSchema,
  config: Text2SqlConfigSchema,
  phase: PhaseSchema,
  /** Tools the routers already ran, in order. */
  retrieval: z.array(z.string()),
  testing: z.array(z.string()),
  keywords: z.array(z.string()),
  /** The schema after table and column selection; the whole schema until then (or when selection failed). */
  linked: DatabaseSchemaSchema.optional(),
  candidates: z.array(CandidateStateSchema),
  tests: z.array(z.string()),
  /** The candidates of the stage in flight (revise, evaluate), in call order. */
  inStage: z.array(z.number().int()),
  /** Queries waiting for execution: kept so that a restarted object runs them again instead of stalling. */
  pendingQueries: z.array(QuerySchema).optional(),
  /** Self-correction rounds that ran (stages of revise calls). */
  rounds: z.number().int().nonnegative(),
  /** Things that went wrong without failing the run (an answer that did not parse), for the caller to see. */
  notes: z.array(z.string()),
  answer: z
    .object({
      candidate: z.number().int(),
      sql: z.string(),
      columns: z.array(z.string()),
      rows: z.array(z.array(SqlCellSchema)),
      truncated: z.boolean(),
      passedTests: z.number().int(),
    })
    .optional(),
});
export type Text2SqlRun = z.infer<typeof Text2SqlRunSchema>;
