import { z } from "zod";

export const PoolNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/).default("default");

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
    /** End-to-end SLO in pool-clock milliseconds; default 5x the pool's base SLO. */
    sloMs: z.number().positive().max(86_400_000).optional(),
    pool: PoolNameSchema,
  })
  .strict();
export type ReplayWorkflow = z.infer<typeof ReplayWorkflowSchema>;

export const WorkflowIdSchema = z.string().regex(/^wf_[0-9a-f]{32}$/);

export const DEFAULT_SLO_SCALE = 5;
