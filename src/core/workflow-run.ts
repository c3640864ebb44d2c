import { z } from "zod";
import { PlanStateSchema, newPlan, stageBudget, type StagePlanner } from "./remaining";
import { ChatMessageSchema, SamplingSchema, WorkflowSpecSchema, type WorkflowSpec } from "./workflow";

/** A call released to the scheduler, with its stage budget and deadline (absolute seconds). */
export const ReleasedCallSchema = z.object({
  id: z.string(),
  workflowId: z.string(),
  stageIndex: z.number().int().nonnegative(),
  step: z.string(),
  inputTokens: z.number().int().nonnegative(),
  /** The true output length when replaying a trace (engines and emulators may read it). */
  outputTokens: z.number().int().positive(),
  expectedOutputTokens: z.number().positive(),
  prompt: z.string().optional(),
  messages: z.array(ChatMessageSchema).min(1).optional(),
  sampling: SamplingSchema.optional(),
  maxTokens: z.number().int().positive().optional(),
  releasedAt: z.number(),
  budgetS: z.number(),
  deadlineS: z.number(),
  /** The workflow's end-to-end deadline (absolute seconds), for workflow-level urgency (queue/least-slack). */
  workflowDeadlineS: z.number().optional(),
  /** Expected seconds of the stages still to come after this one (Σ t̄ over the plan), at release. */
  remainingAfterS: z.number().optional(),
  /** Which dispatch this is: 0 when released, one more each time the call is sent elsewhere (core/call-retry). */
  dispatch: z.number().int().nonnegative().optional(),
});
export type ReleasedCall = z.infer<typeof ReleasedCallSchema>;

/** Plain data, so a Durable Object can persist it as it is. */
export const WorkflowStateSchema = z.object({
  id: z.string(),
  spec: WorkflowSpecSchema,
  arrivalS: z.number(),
  sloS: z.number(),
  stageIndex: z.number().int(),
  pending: z.array(z.string()),
  plan: PlanStateSchema,
  finishedAt: z.number().optional(),
});
export type WorkflowState = z.infer<typeof WorkflowStateSchema>;

export interface ReleaseContext {
  planner: StagePlanner;
  meanStepTime(step: string): number;
  expectedOutput(step: string): number;
}

export function startWorkflow(id: string, spec: WorkflowSpec, arrivalS: number, sloS: number): WorkflowState {
  return { id, spec, arrivalS, sloS, stageIndex: -1, pending: [], plan: newPlan(spec.template) };
}

/** Releases the next stage at `now`: every call of it gets the same budget B and deadline r + B. */
export function releaseNextStage(w: WorkflowState, ctx: ReleaseContext, now: number): ReleasedCall[] {
  const index = w.stageIndex + 1;
  const stage = w.spec.stages[index];
  if (stage === undefined || w.pending.length > 0) return [];
  w.stageIndex = index;
  const remaining = ctx.planner.onRelease(w.plan, stage.step);
  let remainingMean = 0;
  for (const s of remaining) remainingMean += ctx.meanStepTime(s);
  const budgetS = stageBudget(w.sloS - (now - w.arrivalS), ctx.meanStepTime(stage.step), remainingMean);
  const calls = stage.calls.map((c, i): ReleasedCall => ({
    id: `${w.id}:${index}:${i}`,
    workflowId: w.id,
    stageIndex: index,
    step: c.step,
    inputTokens: c.inputTokens,
    outputTokens: c.outputTokens,
    expectedOutputTokens: c.expectedOutputTokens ?? ctx.expectedOutput(c.step),
    ...(c.prompt === undefined ? {} : { prompt: c.prompt }),
    ...(c.messages === undefined ? {} : { messages: c.messages }),
    ...(c.sampling === undefined ? {} : { sampling: c.sampling }),
    ...(c.maxTokens === undefined ? {} : { maxTokens: c.maxTokens }),
    releasedAt: now,
    budgetS,
    deadlineS: now + budgetS,
    workflowDeadlineS: w.arrivalS + w.sloS,
    remainingAfterS: remainingMean,
  }));
  w.pending = calls.map((c) => c.id);
  return calls;
}

export type CompletionOutcome = "unknown-call" | "stage-open" | "stage-done" | "workflow-done";

/** Marks a call finished; a repeated or foreign call id changes nothing. */
export function completeCall(w: WorkflowState, callId: string, now: number): CompletionOutcome {
  const at = w.pending.indexOf(callId);
  if (at < 0) return "unknown-call";
  w.pending.splice(at, 1);
  if (w.pending.length > 0) return "stage-open";
  if (w.stageIndex + 1 < w.spec.stages.length) return "stage-done";
  w.finishedAt = now;
  return "workflow-done";
}
