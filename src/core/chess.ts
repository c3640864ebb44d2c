import { z } from "zod";
import { stagesFromCalls, type CallSpec, type WorkflowSpec } from "./workflow";

/** Step names exactly as the CHESS traces spell them (../shared/data/traces). */
export const STEP = {
  retriever: "Information Retriever",
  keywords: "extract_keywords",
  candidate: "generate_candidate_llama-agent",
  revise: "revise",
  unitTester: "unit_tester",
  unitTest: "generate_unit_test",
  evaluate: "evaluate",
} as const;

export const CHESS_FAN_OUT: ReadonlySet<string> = new Set([STEP.candidate, STEP.evaluate]);

/** Expected stages of a CHESS workflow (the authors' STANDARD_WORKFLOW): 15 entries, fan-outs once. */
export const CHESS_TEMPLATE: readonly string[] = [
  STEP.retriever, STEP.keywords, STEP.retriever, STEP.retriever, STEP.retriever,
  STEP.candidate,
  STEP.revise, STEP.revise, STEP.revise, STEP.revise,
  STEP.unitTester, STEP.unitTest, STEP.unitTester, STEP.evaluate, STEP.unitTester,
];

export interface StepTokens {
  inputTokens: number;
  outputTokens: number;
}

/**
 * Mean tokens per call by step, pooled over chess-trace1..3 (296 workflows, 5,716 calls; see
 * ../shared/data/traces/step-stats.csv). The scheduler's expected output length before any
 * running mean exists, and the per-step sizes of t̄(step).
 */
export const CHESS_STEP_MEANS: Readonly<Record<string, StepTokens>> = {
  [STEP.retriever]: { inputTokens: 306.3, outputTokens: 7.4 },
  [STEP.keywords]: { inputTokens: 682.6, outputTokens: 52.3 },
  [STEP.candidate]: { inputTokens: 10916.9, outputTokens: 705.6 },
  [STEP.revise]: { inputTokens: 7006.9, outputTokens: 126.1 },
  [STEP.unitTester]: { inputTokens: 274.7, outputTokens: 4.7 },
  [STEP.unitTest]: { inputTokens: 1190.4, outputTokens: 102.4 },
  [STEP.evaluate]: { inputTokens: 1132.0, outputTokens: 30.2 },
};

/**
 * The one fixed (input, output) pair per step that the authors' simulator estimates every call of
 * that step with (EMPIRICAL_IO_LEN in simulator/core/request.py). Parity mode only.
 */
export const PARITY_STEP_PAIRS: Readonly<Record<string, StepTokens>> = {
  [STEP.retriever]: { inputTokens: 308, outputTokens: 5 },
  [STEP.keywords]: { inputTokens: 667, outputTokens: 45 },
  [STEP.candidate]: { inputTokens: 11748, outputTokens: 678 },
  [STEP.revise]: { inputTokens: 5963, outputTokens: 79 },
  [STEP.unitTester]: { inputTokens: 275, outputTokens: 4 },
  [STEP.unitTest]: { inputTokens: 1109, outputTokens: 103 },
  [STEP.evaluate]: { inputTokens: 961, outputTokens: 22 },
};

/** One element of a reference trace file. */
export const TraceEntrySchema = z.object({
  Text2SQLRequest: z
    .array(
      z.object({
        step: z.string().min(1),
        input_length: z.number().int().nonnegative(),
        output_length: z.number().int().positive(),
      }),
    )
    .min(1),
});
export type TraceEntry = z.infer<typeof TraceEntrySchema>;

/**
 * DESIGN section 1: calls in recorded order; consecutive candidate calls form one parallel stage,
 * and so do consecutive evaluate calls; every other call is its own sequential stage.
 */
export function workflowFromTrace(entry: TraceEntry): WorkflowSpec {
  const calls: CallSpec[] = entry.Text2SQLRequest.map((c) => ({
    step: c.step,
    inputTokens: c.input_length,
    outputTokens: c.output_length,
  }));
  return { kind: "chess", stages: stagesFromCalls(calls, CHESS_FAN_OUT), template: [...CHESS_TEMPLATE] };
}
