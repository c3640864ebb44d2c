import { z } from "zod";
import { LIMITS } from "../core/limits";
import { POOL_NAME_PATTERN } from "../core/pool-routing";

const { replay: R, text2sql: T } = LIMITS;

export const PoolNameSchema = z.string().regex(POOL_NAME_PATTERN).default("default");

/** A request's own pool: when absent, POOL_ROUTES picks it from the request's model (src/core/pool-routing.ts). */
export const RequestPoolSchema = PoolNameSchema.unwrap().optional();

/** The SLO as a multiple of the pool's base SLO, within the tenant's class (src/core/tenant.ts); or give sloMs. */
export const SloScaleSchema = z.number().positive().max(LIMITS.workflow.maxSloScale).optional();

/** A replayed workflow: the reference trace format as a request; prompts become synthetic text. */
export const ReplayWorkflowSchema = z
  .object({
    kind: z.literal("replay"),
    calls: z
      .array(
        z
          .object({
            step: z.string().min(1).max(R.maxStepChars),
            inputTokens: z.number().int().nonnegative().max(R.maxInputTokens),
            outputTokens: z.number().int().positive().max(R.maxOutputTokens),
          })
          .strict(),
      )
      .min(1)
      .max(R.maxCalls),
    /** End-to-end SLO in pool-clock milliseconds; default the tenant's default scale of the pool's base SLO. */
    sloMs: z.number().positive().max(LIMITS.workflow.maxSloMs).optional(),
    sloScale: SloScaleSchema,
    pool: RequestPoolSchema,
  })
  .strict();
export type ReplayWorkflow = z.infer<typeof ReplayWorkflowSchema>;

export const WorkflowIdSchema = z.string().regex(/^wf_[0-9a-f]{32}$/);

/** The built-in agentic Text-to-SQL workflow over a registered database (see src/core/text2sql/run.ts). */
export const Text2SqlWorkflowSchema = z.strictObject({
  kind: z.literal("text2sql"),
  database: z.string().min(1).max(T.maxDatabaseNameChars),
  question: z.string().trim().min(1).max(T.maxQuestionChars),
  /** Domain knowledge the question needs (BIRD's "evidence"), passed to every prompt that sees the question. */
  hint: z.string().trim().max(T.maxQuestionChars).optional(),
  sloMs: z.number().positive().max(LIMITS.workflow.maxSloMs).optional(),
  sloScale: SloScaleSchema,
  pool: RequestPoolSchema,
  candidates: z.number().int().min(T.candidates.min).max(T.candidates.max).optional(),
  maxRounds: z.number().int().min(T.maxRounds.min).max(T.maxRounds.max).optional(),
  tests: z.number().int().min(T.tests.min).max(T.tests.max).optional(),
  maxRows: z.number().int().min(T.maxRows.min).max(T.maxRows.max).optional(),
});
export type Text2SqlWorkflow = z.infer<typeof Text2SqlWorkflowSchema>;
