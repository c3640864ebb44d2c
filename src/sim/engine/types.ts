/** A call as an engine sees it: sizes only. `outputTokens` is the true length to generate. */
export interface EngineCall {
  id: string;
  inputTokens: number;
  outputTokens: number;
}

/** The instance's queue, as far as the engine may touch it: look at the head, take the head. */
export interface AdmissionSource {
  peek(): EngineCall | undefined;
  pop(): EngineCall | undefined;
}

export interface StepPlan {
  durationS: number;
  /** Calls taken from the queue into the engine for this step. */
  admitted: string[];
}

export interface EngineStats {
  running: number;
  waiting: number;
  kvUsage: number;
  preemptions: number;
  stepsRun: number;
}

/**
 * One vLLM server, stepped by its owner: plan a step (admitting from the queue at the batch
 * boundary), wait its duration, then apply it. Pure and synchronous, so the simulator and the
 * emulator can both drive it.
 */
export interface Engine {
  planStep(source: AdmissionSource): StepPlan | null;
  /** Applies the planned step; returns the ids of the calls that finished in it. */
  finishStep(): string[];
  /** Whether a call of this size can ever be admitted (its prompt fits the KV cache). */
  fits(call: EngineCall): boolean;
  stats(): EngineStats;
}
