/**
 * The operating curves behind the service frontier (issue 11; frontier-bounds.ts): what one GPU type's engine
 * does with a call mix at each concurrency, so that a latency bar stated against the batch-of-one floor can be
 * checked against what batching physically costs.
 *
 * Why: the P95 floor (limits.ts) puts every call alone on its fastest GPU. At 80% of saturation the servers must
 * batch, and a decode step reads the KV context of the whole batch, so every call in it slows. How much they must
 * slow at a given rate is a property of the engine model, not of any scheduler.
 *
 * How: the GPU runs the mix in a closed loop at a fixed concurrency (no queue, no dependencies), through the same
 * engine code the simulator uses. One operating point is its work rate (floor seconds of calls completed per
 * second, so types and mixes add up) and its stretch (time in the engine over floor seconds, work-weighted),
 * overall and per call class. Work rate times stretch is the concurrency held (Little's law).
 *
 * Trade-offs: the closed loop holds a constant batch; the frontier lets a GPU share its time among points, not
 * vary its batch within a call. Curves are measured on the whole mix and on each class alone, so a scheduler that
 * keeps the long-context calls off the small-cache GPUs is within the model.
 */
import { createRng, uniformInt } from "../core/rng";
import type { CallSpec } from "../core/workflow";
import type { SimInstance } from "./cluster";
import { createEngine, type EngineKind } from "./engine/create";
import type { EngineCall } from "./engine/types";
import type { FloorModel } from "./limits";

export interface OperatingPoint {
  concurrency: number;
  /** Floor seconds of calls completed per second. */
  workRate: number;
  /** Seconds in the engine over floor seconds, over the calls completed in the window. */
  stretch: number;
  /** Per call class: its share of the work completed, and its own stretch (NaN where it had none). */
  classShare: number[];
  classStretch: number[];
}

/** A call as the frontier sees it: its size and its class (an index below the curve's class count). */
export type ClassedCall = Pick<CallSpec, "inputTokens" | "outputTokens"> & { cls: number };

export interface CurveOptions {
  concurrencies: readonly number[];
  /** Completions measured per point, after a warm-up of as many. */
  window: number;
  seed: number;
  classes: number;
}

/** One GPU type's operating points on a call mix, each a closed loop holding `concurrency` calls in the engine. */
export function operatingCurve(kind: EngineKind, inst: SimInstance, mix: readonly ClassedCall[], floor: FloorModel, o: CurveOptions): OperatingPoint[] {
  const fits = mix.filter((c) => inst.maxTokens === undefined || c.inputTokens + c.outputTokens <= inst.maxTokens);
  if (fits.length === 0) return [];
  return o.concurrencies.map((c) => closedLoop(kind, inst, fits, floor, c, o));
}

function closedLoop(kind: EngineKind, inst: SimInstance, mix: readonly ClassedCall[], floor: FloorModel, concurrency: number, o: CurveOptions): OperatingPoint {
  const engine = createEngine(kind, inst);
  const rng = createRng(o.seed + concurrency);
  const inEngine = new Map<string, { call: ClassedCall; startS: number }>();
  let next: (EngineCall & { call: ClassedCall }) | undefined;
  let serial = 0;
  const draw = (): EngineCall & { call: ClassedCall } => {
    const call = mix[uniformInt(rng, mix.length)] ?? { inputTokens: 1, outputTokens: 1, cls: 0 };
    serial += 1;
    return { id: `c${serial}`, inputTokens: call.inputTokens, outputTokens: call.outputTokens, call };
  };
  let now = 0;
  const source = {
    peek: (): EngineCall | undefined => {
      if (inEngine.size >= concurrency) return undefined;
      next ??= draw();
      return next;
    },
    pop: (): EngineCall | undefined => {
      const head = source.peek();
      if (head !== undefined && next !== undefined) inEngine.set(next.id, { call: next.call, startS: now });
      next = undefined;
      return head;
    },
  };
  let done = 0;
  let windowStartS = 0;
  const work = new Array<number>(o.classes).fill(0);
  const spent = new Array<number>(o.classes).fill(0);
  while (done < 2 * o.window) {
    const plan = engine.planStep(source);
    if (plan === null) throw new Error("operatingCurve: the engine stalled on a closed loop");
    now += plan.durationS;
    for (const id of engine.finishStep()) {
      const c = inEngine.get(id);
      if (c === undefined) continue;
      inEngine.delete(id);
      done += 1;
      if (done === o.window) windowStartS = now;
      if (done <= o.window) continue;
      work[c.call.cls] = (work[c.call.cls] ?? 0) + floor.callSeconds(c.call);
      spent[c.call.cls] = (spent[c.call.cls] ?? 0) + now - c.startS;
    }
  }
  const total = work.reduce((a, b) => a + b, 0);
  const totalSpent = spent.reduce((a, b) => a + b, 0);
  return {
    concurrency,
    workRate: total / (now - windowStartS),
    stretch: totalSpent / total,
    classShare: work.map((w) => w / total),
    classStretch: work.map((w, i) => (w > 0 ? (spent[i] ?? 0) / w : Number.NaN)),
  };
}
