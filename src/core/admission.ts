/**
 * Admission from an instance's queue to its vLLM server.
 *
 * Why: the queue's order (least laxity first) decides only while calls wait in our queue rather than
 * in vLLM's own FCFS waiting list, yet the server must stay full. So a call is admitted while the
 * calls already admitted claim less KV cache than the server has (each claims its prompt plus its
 * expected output) and fewer than maxConcurrency run. A fixed count would either starve a large
 * cache of short calls or overfill a small one with long prompts.
 * Inputs: what is admitted (count, claimed tokens), the next call, the instance's limits.
 * Trade-offs: a claim is an estimate; outputs longer than expected make vLLM preempt (as it would
 * anyway), shorter ones leave KV idle until the next admission. An empty server always takes one
 * call, so a call larger than the budget still runs.
 */
import type { ReleasedCall } from "./workflow-run";

export interface AdmissionLimits {
  maxConcurrency: number;
  kvTokens: number;
}

export interface AdmissionLoad {
  calls: number;
  tokens: number;
}

export function kvClaim(call: Pick<ReleasedCall, "inputTokens" | "expectedOutputTokens">): number {
  return call.inputTokens + Math.ceil(call.expectedOutputTokens);
}

export function canAdmit(load: AdmissionLoad, call: Pick<ReleasedCall, "inputTokens" | "expectedOutputTokens">, limits: AdmissionLimits): boolean {
  if (load.calls === 0) return true;
  return load.calls < limits.maxConcurrency && load.tokens + kvClaim(call) <= limits.kvTokens;
}
