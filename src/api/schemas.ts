import { z } from "zod";

export const PoolNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/).default("default");

/** The SLO as a multiple of the pool's base SLO, within the tenant's class (src/core/tenant.ts); or give sloMs. */
export const SloScaleSchema = z.number().positive().max(100).optional();

/** A replayed workflow: the reference trace format as a request; prompts become synthetic text. */
export const ReplayWorkflowSchema = z
  .object({
    kind: z.literal("replay"),
    calls: z
      .array(
        z
          .object({
            step: z.string().min(1).max(64),
            inputTokens: z.number().int().nonnegative().max(1_000_000),
            outputTokens: z.number().int().positive().max(100_000),
          })
          .strict(),
      )
      .min(1)
      .max(500),
    /** End-to-end SLO in pool-clock milliseconds; default the tenant's default scale of the pool's base SLO. */
    sloMs: z.number().positive().max(86_400_000).optional(),
    sloScale: SloScaleSchema,
    pool: PoolNameSchema,
  })
  .strict();
export type ReplayWorkflow = z.infer<typeof ReplayWorkflowSchema>;

export const WorkflowIdSchema = z.string().regex(/^wf_[0-9a-f]{32}$/);

/** Longest question or hint: a question is a sentence or a paragraph, never a document. */
export const MAX_QUESTION_CHARS = 4_000;

/** The built-in agentic Text-to-SQL workflow over a registered database (see src/core/text2sql/run.ts). */
export const Text2SqlWorkflowSchema = z.strictObject({
  kind: z.literal("text2sql"),
  database: z.string().min(1).max(63),
  question: z.string().trim().min(1).max(MAX_QUESTION_CHARS),
  /** Domain knowledge the question needs (BIRD's "evidence"), passed to every prompt that sees the question. */
  hint: z.string().trim().max(MAX_QUESTION_CHARS).optional(),
  sloMs: z.number().positive().max(86_400_000).optional(),
  sloScale: SloScaleSchema,
  pool: PoolNameSchema,
  candidates: z.number().int().min(1).max(8).optional(),
  maxRounds: z.number().int().min(0).max(10).optional(),
  tests: z.number().int().min(1).max(10).optional(),
  maxRows: z.number().int().min(1).max(1000).optional(),
});
export type Text2SqlWorkflow = z.infer<typeof Text2SqlWorkflowSchema>;
