import { z } from "zod";

/** One workflow as the load generator saw it end (or not). */
export const LoadgenWorkflowSchema = z.object({
  index: z.number().int(),
  id: z.string().nullable(),
  /** Scheduled arrival, pool-clock seconds from the run's start (the simulator's arrival). */
  arrivalS: z.number(),
  status: z.string(),
  /** Wall-clock ms at which the gateway created it. */
  createdAtMs: z.number().nullable(),
  latencyMs: z.number().nullable(),
  sloMs: z.number().nullable(),
  calls: z.number().int(),
  error: z.string().nullable(),
  /** Why the gateway refused it at submission (e.g. "overloaded", "rate_limited"), null if it was accepted. */
  rejectCode: z.string().nullable().default(null),
  /** Admitted past the pool's prediction, as best-effort. */
  bestEffort: z.boolean().default(false),
});
export type LoadgenWorkflow = z.infer<typeof LoadgenWorkflowSchema>;

/** The load generator's stdout protocol: one of these per line. */
export const LoadgenEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("submitted"), index: z.number().int(), id: z.string(), lateMs: z.number() }),
  z.object({ type: z.literal("rejected"), index: z.number().int(), message: z.string(), code: z.string().nullable().default(null) }),
  z.object({ type: z.literal("ended"), index: z.number().int(), id: z.string(), status: z.string() }),
  z.object({ type: z.literal("result"), wallMs: z.number(), workflows: z.array(LoadgenWorkflowSchema) }),
]);
export type LoadgenEvent = z.infer<typeof LoadgenEventSchema>;
