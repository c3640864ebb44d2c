/**
 * The service frontier of one scenario (pool × workload), as `npm run bench:frontier` reports it: the pool's
 * operating curves, the least mean stretch and the least P95 at given loads, and the highest capacity at given
 * SLO scales, all by the fluid model of frontier-bounds.ts. Loads are shares of a saturation the caller passes
 * (the measured one, so that "80% load" means what it means in the ablation).
 */
import { buildWorkload } from "./workload";
import { FloorModel } from "./limits";
import { operatingCurve, type ClassedCall, type OperatingPoint } from "./frontier";
import { criticalSeconds, leastMeanStretch, p95Bound, servingPlan, stretchDemand, type Supply, type WorkflowWork } from "./frontier-bounds";
import { sortedPercentile } from "../core/stats";
import type { Scenario } from "./scenario";

export interface FrontierOptions {
  workflows: number;
  window: number;
  seed: number;
  loads: readonly number[];
  scales: readonly number[];
}

type Time = { gpu: string; concurrency: number; calls: string; instances: number }[];

export interface ScenarioFrontier {
  curves: { gpu: string; count: number; points: OperatingPoint[] }[];
  floorP95S: number;
  /** Workflows per second with every instance at its best point. */
  saturation: number;
  /** The saturation loads are taken against. */
  loadBasis: number;
  loads: { load: number; rate: number; meanStretch: number; p95S: number; p95OverFloor: number }[];
  capacity: { scale: number; sloS: number; capacity: number; time: Time }[];
}

const CONCURRENCY = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
/**
 * Calls are classed short or long by their context. A 60k-token cache holds fifteen 4k-token calls but only four
 * or five candidate generations of 12k, so which calls a small-cache GPU takes changes what it can do.
 */
const LONG_CONTEXT_TOKENS = 4096;
const CLASS_NAMES = ["short", "long"];

export function scenarioFrontier(s: Scenario, baseSloS: number, measuredSaturation: number | undefined, o: FrontierOptions): ScenarioFrontier {
  const workload = buildWorkload(s.source, o.workflows, 1, o.seed);
  const floor = new FloorModel(s.engine, s.instances);
  const classed = (c: { inputTokens: number; outputTokens: number }): ClassedCall => ({ ...c, cls: c.inputTokens + c.outputTokens > LONG_CONTEXT_TOKENS ? 1 : 0 });
  const mix = workload.flatMap((w) => w.spec.stages.flatMap((st) => st.calls.map(classed)));
  const curves: ScenarioFrontier["curves"] = [];
  for (const inst of s.instances) {
    const known = curves.find((c) => c.gpu === inst.gpu);
    if (known !== undefined) {
      known.count += 1;
      continue;
    }
    const opts = { concurrencies: CONCURRENCY.filter((c) => c <= inst.capacity.maxSeqs), window: o.window, seed: o.seed, classes: CLASS_NAMES.length };
    // The whole mix, and each class alone: a GPU may share its time among all of them.
    const subsets = [mix, ...CLASS_NAMES.map((_, cls) => mix.filter((c) => c.cls === cls))];
    curves.push({ gpu: inst.gpu, count: 1, points: subsets.flatMap((calls) => operatingCurve(s.engine, inst, calls, floor, opts)) });
  }
  const supply: Supply[] = curves.map((c) => ({ count: c.count, points: c.points }));
  const ws: WorkflowWork[] = workload.map((w) => ({ stages: w.spec.stages.map((st) => st.calls.map((c) => ({ floorS: floor.callSeconds(c), cls: classed(c).cls }))) }));
  const floorP95S = sortedPercentile(ws.map(criticalSeconds).sort((a, b) => a - b), 0.95);
  const unlimited = stretchDemand(ws, Infinity, 0.95) ?? [];
  const classWork = CLASS_NAMES.map((_, cls) => unlimited.filter((d) => d.cls === cls).reduce((a, d) => a + d.work, 0));
  const saturation = servingPlan(supply, unlimited).multiple;
  const loadBasis = measuredSaturation ?? saturation;
  const loads = o.loads.map((load) => {
    const rate = load * loadBasis;
    const p95S = p95Bound(ws, supply, rate);
    return { load, rate, meanStretch: leastMeanStretch(supply, classWork, rate), p95S, p95OverFloor: p95S / floorP95S };
  });
  const capacity = o.scales.map((scale) => {
    const sloS = scale * baseSloS;
    const demand = stretchDemand(ws, sloS, 0.95);
    const plan = demand === null ? { multiple: 0, time: [] } : servingPlan(supply, demand);
    const time = plan.time.map((t) => ({ gpu: curves[t.type]?.gpu ?? "?", concurrency: t.concurrency, calls: t.pure === null ? "mix" : (CLASS_NAMES[t.pure] ?? "?"), instances: t.instances }));
    return { scale, sloS, capacity: plan.multiple, time };
  });
  return { curves, floorP95S, saturation, loadBasis, loads, capacity };
}


