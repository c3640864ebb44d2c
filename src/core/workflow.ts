import { z } from "zod";

/**
 * One LLM call as the scheduler sees it. `outputTokens` is what the call will really produce (known
 * only when replaying a trace; the simulator's engines use it), `expectedOutputTokens` what the
 * scheduler may assume (the step's running mean, or the caller's hint).
 */
export const CallSpecSchema = z.object({
  step: z.string().min(1),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().positive(),
  expectedOutputTokens: z.number().positive().optional(),
  /** The prompt text for a real call; a replayed call has none and sends synthetic text of inputTokens. */
  prompt: z.string().optional(),
  maxTokens: z.number().int().positive().optional(),
});
export type CallSpec = z.infer<typeof CallSpecSchema>;

/** Calls of one stage run in parallel (fan-out); the next stage starts when all have finished (fan-in). */
export const StageSpecSchema = z.object({
  step: z.string().min(1),
  calls: z.array(CallSpecSchema).min(1),
});
export type StageSpec = z.infer<typeof StageSpecSchema>;

/**
 * `template` is the expected sequence of stage step types (fan-out stages once), which the SLO budget
 * uses for "the remaining stages"; it is what the scheduler believes, not what will happen.
 */
export const WorkflowSpecSchema = z.object({
  kind: z.string().min(1),
  stages: z.array(StageSpecSchema).min(1),
  template: z.array(z.string().min(1)),
});
export type WorkflowSpec = z.infer<typeof WorkflowSpecSchema>;

/** Groups an ordered call list into stages: consecutive calls of a fan-out step form one stage. */
export function stagesFromCalls(calls: readonly CallSpec[], fanOutSteps: ReadonlySet<string>): StageSpec[] {
  const stages: StageSpec[] = [];
  for (const call of calls) {
    const last = stages.at(-1);
    if (last !== undefined && last.step === call.step && fanOutSteps.has(call.step)) last.calls.push(call);
    else stages.push({ step: call.step, calls: [call] });
  }
  return stages;
}

export function callCount(spec: WorkflowSpec): number {
  return spec.stages.reduce((n, s) => n + s.calls.length, 0);
}
