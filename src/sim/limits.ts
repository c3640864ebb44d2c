/**
 * The physical limits a scheduler is measured against (issue 11), per scenario:
 *
 * - P95 floor: the P95 over the workload of each workflow's critical path with every call alone (batch of one,
 *   no queueing) on the pool's fastest GPU type for that call. No scheduler on this pool can beat it: a stage
 *   ends with its slowest call and stages run one after another.
 * - Saturation throughput: the highest completion rate any policy reaches under overload. Capacity at any SLO
 *   cannot exceed it for long, so a capacity figure divided by it says how much room is left.
 *
 * Both use the scenario's own engine model, so the floor is what the simulator itself would time a lone call at.
 */
import { sortedPercentile } from "../core/stats";
import type { CallSpec, WorkflowSpec } from "../core/workflow";
import type { SimInstance } from "./cluster";
import { createEngine, type EngineKind } from "./engine/create";
import type { EngineCall } from "./engine/types";
import type { WorkflowResult } from "./simulator";

/** Seconds the engine takes to run one call alone, from admission to its last token. */
export function loneCallSeconds(kind: EngineKind, inst: SimInstance, call: Pick<CallSpec, "inputTokens" | "outputTokens">): number {
  const engine = createEngine(kind, inst);
  let pending: EngineCall | undefined = { id: "lone", inputTokens: call.inputTokens, outputTokens: call.outputTokens };
  const source = { peek: () => pending, pop: () => {
    const head = pending;
    pending = undefined;
    return head;
  } };
  let t = 0;
  for (;;) {
    const plan = engine.planStep(source);
    if (plan === null) throw new Error("loneCallSeconds: the engine would not run the call");
    t += plan.durationS;
    if (engine.finishStep().length > 0) return t;
  }
}

/** Memoised per GPU type and call size: a trace repeats sizes, and each lone run steps once per output token. */
export class FloorModel {
  private readonly memo = new Map<string, number>();
  private readonly byGpu: SimInstance[];

  constructor(
    private readonly kind: EngineKind,
    instances: readonly SimInstance[],
  ) {
    const seen = new Map<string, SimInstance>();
    for (const inst of instances) if (!seen.has(inst.gpu)) seen.set(inst.gpu, inst);
    this.byGpu = [...seen.values()];
  }

  /** The call alone on the GPU type that runs it fastest (among those whose cache holds it). */
  callSeconds(call: Pick<CallSpec, "inputTokens" | "outputTokens">): number {
    let best = Infinity;
    for (const inst of this.byGpu) {
      if (inst.maxTokens !== undefined && call.inputTokens + call.outputTokens > inst.maxTokens) continue;
      best = Math.min(best, this.loneSeconds(inst, call));
    }
    return best;
  }

  /** The call alone on this instance's GPU type. */
  loneSeconds(inst: SimInstance, call: Pick<CallSpec, "inputTokens" | "outputTokens">): number {
    const key = `${inst.gpu}:${call.inputTokens}:${call.outputTokens}`;
    let s = this.memo.get(key);
    if (s === undefined) {
      s = loneCallSeconds(this.kind, inst, call);
      this.memo.set(key, s);
    }
    return s;
  }

  criticalPathSeconds(spec: WorkflowSpec): number {
    let total = 0;
    for (const stage of spec.stages) {
      let slowest = 0;
      for (const call of stage.calls) slowest = Math.max(slowest, this.callSeconds(call));
      total += slowest;
    }
    return total;
  }
}

export interface LatencyFloor {
  p50S: number;
  p95S: number;
  /** Per workflow id: its critical path, so a run's latencies can be read as a multiple of it. */
  perWorkflow: ReadonlyMap<string, number>;
}

export function latencyFloor(kind: EngineKind, instances: readonly SimInstance[], workload: readonly { id: string; spec: WorkflowSpec }[]): LatencyFloor {
  const model = new FloorModel(kind, instances);
  const perWorkflow = new Map<string, number>();
  for (const w of workload) perWorkflow.set(w.id, model.criticalPathSeconds(w.spec));
  const sorted = [...perWorkflow.values()].sort((a, b) => a - b);
  return { p50S: sortedPercentile(sorted, 0.5), p95S: sortedPercentile(sorted, 0.95), perWorkflow };
}

/**
 * Completions per second of an overloaded run: every workflow over the span from the first arrival to the last
 * completion. The GPUs are busy all along (the backlog only empties at the very end), so this is the pool's
 * work rate in workflows, whatever order a policy finishes them in. Windows cut by arrivals or by completion
 * quantiles were tried first and are not order-blind: a policy that progresses many workflows at once finishes
 * them in a burst at the end, one that finishes them in arrival order spreads them out. Errs low by the tail,
 * when the last chains cannot fill the pool, so runs should be long.
 */
export function saturatedCompletionRate(results: readonly WorkflowResult[]): number {
  if (results.length < 10) return Number.NaN;
  let first = Infinity;
  let last = -Infinity;
  for (const r of results) {
    first = Math.min(first, r.arrivalS);
    last = Math.max(last, r.finishS);
  }
  return last > first ? results.length / (last - first) : Number.NaN;
}
