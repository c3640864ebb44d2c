/**
 * A validated DAG request as a workflow the scheduler runs: its stages in the plan's topological
 * order, released one at a time (a stage starts when the one before it in that order has finished,
 * which respects every `after` edge; independent branches do not overlap yet). Prompts are rendered
 * at release, from the inputs and the outputs of the stages already done.
 */
import type { DagPlan } from "./dag";
import { render } from "./template";
import type { CallSpec, WorkflowSpec } from "./workflow";

/** Llama-3-style tokenizers average about four characters of English per token. */
const CHARS_PER_TOKEN = 4;

export const dagStep = (stageId: string): string => `dag:${stageId}`;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function calls(plan: DagPlan, index: number, prompts: (i: number) => string): CallSpec[] {
  const s = plan.stages[index];
  if (s === undefined) return [];
  return Array.from({ length: s.fanOut }, (_, i) => {
    const prompt = prompts(i);
    return {
      step: dagStep(s.id),
      inputTokens: estimateTokens(prompt),
      outputTokens: s.maxTokens,
      maxTokens: s.maxTokens,
      ...(s.expectedOutputTokens === undefined ? {} : { expectedOutputTokens: s.expectedOutputTokens }),
      prompt,
    };
  });
}

/** The spec at submission: prompts are the raw templates until each stage is rendered at its release. */
export function dagSpec(plan: DagPlan): WorkflowSpec {
  return {
    kind: "dag",
    stages: plan.stages.map((s, index) => ({ step: dagStep(s.id), calls: calls(plan, index, () => s.prompt) })),
    template: plan.stages.map((s) => dagStep(s.id)),
  };
}

/** Stage `index`'s calls, prompts rendered; `outputs` maps each finished stage id to its calls' texts in order. */
export function renderDagStage(plan: DagPlan, index: number, outputs: Readonly<Record<string, readonly string[]>>): CallSpec[] {
  const s = plan.stages[index];
  if (s === undefined) return [];
  return calls(plan, index, (fanoutIndex) => render(s.template, { inputs: plan.inputs, outputs, fanoutIndex }));
}
