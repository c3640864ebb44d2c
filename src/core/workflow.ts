import { z } from "zod";

/**
 * A chat message as vLLM takes it: text content only (tool calls, images and audio are not
 * scheduled through hexflow).
 */
export const ChatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/**
 * Sampling parameters forwarded to vLLM as they are. `n` is absent on purpose: one call is one
 * sequence, which is what the scheduler prices and admits.
 */
export const SamplingSchema = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    topP: z.number().gt(0).max(1).optional(),
    stop: z.array(z.string().min(1)).max(4).optional(),
    seed: z.number().int().optional(),
    presencePenalty: z.number().min(-2).max(2).optional(),
    frequencyPenalty: z.number().min(-2).max(2).optional(),
  })
  .strict();
export type Sampling = z.infer<typeof SamplingSchema>;

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
  /** A chat call's messages (sent to /v1/chat/completions); a call has a prompt or messages, or neither when replayed. */
  messages: z.array(ChatMessageSchema).min(1).optional(),
  sampling: SamplingSchema.optional(),
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
