import type { InstanceInfo } from "../../src/core/estimator";
import type { ReleasedCall } from "../../src/core/workflow-run";

export function call(id: string, over: Partial<ReleasedCall> = {}): ReleasedCall {
  return {
    id,
    workflowId: id.split(":")[0] ?? id,
    stageIndex: 0,
    step: "s",
    inputTokens: 100,
    outputTokens: 10,
    expectedOutputTokens: 10,
    releasedAt: 0,
    budgetS: 10,
    deadlineS: 10,
    ...over,
  };
}

/** An instance whose t̂ is exactly `decodeS` seconds per output token (no prefill, no overhead). */
export function inst(id: string, gpu: InstanceInfo["gpu"], decodeS: number, capacityFactor = 1): InstanceInfo {
  return { id, gpu, cost: { overheadS: 0, prefillS: 0, decodeS }, capacityFactor };
}
