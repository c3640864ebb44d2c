/**
 * The pool's service frontier (issue 11): the least stretch a pool's engines allow at a given work rate, so that
 * a latency bar stated against the batch-of-one floor can be checked against what batching physically costs.
 *
 * Why: the P95 floor (limits.ts) puts every call alone on its fastest GPU. At 80% of saturation the servers must
 * batch, and a decode step reads the KV context of the whole batch, so every call in it slows. How much they must
 * slow at a given rate is a property of the engine model, not of any scheduler.
 *
 * How: each GPU type runs the workload's call mix in a closed loop at a fixed concurrency (no queue, no
 * dependencies), through the same engine code the simulator uses. One operating point is its work rate (floor
 * seconds of calls completed per second, so types and mixes add up) and its stretch (time in the engine over
 * floor seconds, work-weighted); their product is the concurrency held, so by Little's law the least stretch at a
 * rate is the least concurrency that sustains it over the rate. Running at a point part of the time and idling or running at another the rest
 * is also possible, so each instance offers the lower convex hull of its points; the pool fills the cheapest hull
 * segments first, which is exact for a sum of convex costs.
 *
 * Trade-offs, stated where the figures are reported: every instance sees the whole mix (a scheduler that sends
 * short calls to the slow GPUs does better: measured saturations exceed the frontier's by up to 10% on the h100
 * pool), and the closed loop holds a constant batch (by the
 * concavity of a server's rate in its batch, a varying one costs more stretch for the same rate).
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
}

type CallSize = Pick<CallSpec, "inputTokens" | "outputTokens">;

export interface CurveOptions {
  concurrencies: readonly number[];
  /** Completions measured per point, after a warm-up of as many. */
  window: number;
  seed: number;
}

/** One GPU type's operating points on a call mix, each a closed loop holding `concurrency` calls in the engine. */
export function operatingCurve(kind: EngineKind, inst: SimInstance, mix: readonly CallSize[], floor: FloorModel, o: CurveOptions): OperatingPoint[] {
  const fits = mix.filter((c) => inst.maxTokens === undefined || c.inputTokens + c.outputTokens <= inst.maxTokens);
  if (fits.length === 0) return [];
  return o.concurrencies.map((c) => closedLoop(kind, inst, fits, floor, c, o));
}

function closedLoop(kind: EngineKind, inst: SimInstance, mix: readonly CallSize[], floor: FloorModel, concurrency: number, o: CurveOptions): OperatingPoint {
  const engine = createEngine(kind, inst);
  const rng = createRng(o.seed + concurrency);
  const inEngine = new Map<string, { size: CallSize; startS: number }>();
  let next: (EngineCall & { size: CallSize }) | undefined;
  let serial = 0;
  const draw = (): EngineCall & { size: CallSize } => {
    const size = mix[uniformInt(rng, mix.length)] ?? { inputTokens: 1, outputTokens: 1 };
    serial += 1;
    return { id: `c${serial}`, inputTokens: size.inputTokens, outputTokens: size.outputTokens, size };
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
      if (head !== undefined && next !== undefined) inEngine.set(next.id, { size: next.size, startS: now });
      next = undefined;
      return head;
    },
  };
  let done = 0;
  let windowStartS = 0;
  let work = 0;
  let spent = 0;
  while (done < 2 * o.window) {
    const plan = engine.planStep(source);
    if (plan === null) throw new Error("operatingCurve: the engine stalled on a closed loop");
    now += plan.durationS;
    for (const id of engine.finishStep()) {
      const call = inEngine.get(id);
      if (call === undefined) continue;
      inEngine.delete(id);
      done += 1;
      if (done === o.window) windowStartS = now;
      if (done <= o.window) continue;
      const f = floor.callSeconds(call.size);
      work += f;
      spent += now - call.startS;
    }
  }
  return { concurrency, workRate: work / (now - windowStartS), stretch: spent / work };
}

/** A piece of an instance's hull: `width` more work rate at `slope` stretch-seconds per unit of it. */
interface Segment {
  width: number;
  slope: number;
}

/** The lower convex hull of cost = workRate × stretch over workRate, from idle (0, 0), as segments of rising slope. */
function hullSegments(points: readonly OperatingPoint[]): Segment[] {
  const pts = [{ w: 0, c: 0 }, ...points.map((p) => ({ w: p.workRate, c: p.workRate * p.stretch }))].sort((a, b) => a.w - b.w || a.c - b.c);
  const hull: { w: number; c: number }[] = [];
  for (const p of pts) {
    for (;;) {
      const a = hull[hull.length - 2];
      const b = hull[hull.length - 1];
      if (a === undefined || b === undefined) break;
      // b lies on or above the chord a→p: not on the lower hull.
      if ((b.c - a.c) * (p.w - a.w) >= (p.c - a.c) * (b.w - a.w)) hull.pop();
      else break;
    }
    const last = hull[hull.length - 1];
    if (last !== undefined && p.w <= last.w) continue;
    hull.push(p);
  }
  const segs: Segment[] = [];
  for (let i = 1; i < hull.length; i++) {
    const a = hull[i - 1];
    const b = hull[i];
    if (a !== undefined && b !== undefined) segs.push({ width: b.w - a.w, slope: (b.c - a.c) / (b.w - a.w) });
  }
  return segs;
}

export class PoolFrontier {
  private readonly segments: Segment[];
  /** The most work per second the pool's engines complete, with every instance at its best point. */
  readonly maxWorkRate: number;

  constructor(curves: readonly (readonly OperatingPoint[])[]) {
    this.segments = curves.flatMap(hullSegments).sort((a, b) => a.slope - b.slope);
    this.maxWorkRate = this.segments.reduce((s, g) => s + g.width, 0);
  }

  /** The least work-weighted stretch at `workRate` (Infinity past the pool's maximum). */
  minStretch(workRate: number): number {
    if (workRate <= 0) return this.segments[0]?.slope ?? 1;
    let left = workRate;
    let cost = 0;
    for (const g of this.segments) {
      const take = Math.min(left, g.width);
      cost += take * g.slope;
      left -= take;
      if (left <= 1e-12) return cost / workRate;
    }
    return Infinity;
  }
}
