import { estimateSeconds, type CostCoeffs } from "./cost-model";
import type { GpuType } from "./gpu";
import type { StepTokens } from "./chess";

/** What the scheduler knows about one vLLM server. */
export interface InstanceInfo {
  id: string;
  gpu: GpuType;
  cost: CostCoeffs;
  /** Multiplies the instance's load in the WB score; DESIGN 2.1 replaces the authors' k = 0.5. */
  capacityFactor: number;
  /** The longest prompt + output the server can hold (context length or KV cache); unset = no limit. */
  maxTokens?: number;
}

export interface CallSize {
  step: string;
  inputTokens: number;
  expectedOutputTokens: number;
}

/**
 * t̂_m(c) and t̄. `call` mode prices the call's own input length and expected output; `step-pair`
 * mode prices every call of a step at one fixed pair (the authors' simulator).
 */
export class Estimator {
  private readonly stepMeanCache = new Map<string, number>();

  constructor(
    readonly instances: readonly InstanceInfo[],
    private readonly stepTokens: Readonly<Record<string, StepTokens>>,
    private readonly mode: "call" | "step-pair",
    private readonly fallbackTokens: StepTokens = { inputTokens: 1000, outputTokens: 100 },
  ) {
    if (instances.length === 0) throw new Error("Estimator needs at least one instance");
  }

  /** After an instance's cost model changed in place (calibration): the cached step means are stale. */
  repriced(): void {
    this.stepMeanCache.clear();
  }

  onInstance(inst: InstanceInfo, call: CallSize): number {
    const pair = this.mode === "step-pair" ? this.stepTokens[call.step] : undefined;
    return pair
      ? estimateSeconds(inst.cost, pair.inputTokens, pair.outputTokens)
      : estimateSeconds(inst.cost, call.inputTokens, call.expectedOutputTokens);
  }

  /** t̄ of the call itself, instance-weighted over the pool. */
  meanCallTime(call: CallSize): number {
    let sum = 0;
    for (const inst of this.instances) sum += this.onInstance(inst, call);
    return sum / this.instances.length;
  }

  /** t̄(s): the step's typical call, instance-weighted over the pool. */
  meanStepTime(step: string): number {
    const cached = this.stepMeanCache.get(step);
    if (cached !== undefined) return cached;
    const t = this.stepTokens[step] ?? this.fallbackTokens;
    const v = this.meanCallTime({ step, inputTokens: t.inputTokens, expectedOutputTokens: t.outputTokens });
    this.stepMeanCache.set(step, v);
    return v;
  }

  expectedOutput(step: string): number {
    return (this.stepTokens[step] ?? this.fallbackTokens).outputTokens;
  }
}
