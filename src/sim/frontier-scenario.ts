/**
 * The service frontier of one scenario (pool × workload), as `npm run bench:frontier` reports it: the pool's
 * operating curves, the least mean stretch and the least P95 at given loads, and the highest capacity at given
 * SLO scales, all by the fluid model of frontier-bounds.ts. Loads are shares of a saturation the caller passes
 * (the measured one, so that "80% load" means what it means in the ablation).
 */
import { buildWorkload } from "./workload";
import { FloorModel } from "./limits";
import { PoolFrontier, operatingCurve, type OperatingPoint } from "./frontier";
import { criticalSeconds, p95Bound, servingPlan, stretchDemand, type Supply, type WorkflowWork } from "./frontier-bounds";
import { sortedPercentile } from "../core/stats";
import type { Scenario } from "./scenario";

export interface FrontierOptions {
  workflows: number;
  window: number;
  seed: number;
  loads: readonly number[];
  scales: readonly number[];
}

export interface ScenarioFrontier {
  curves: { gpu: string; count: number; points: OperatingPoint[] }[];
  floorP95S: number;
  /** Workflows per second with every instance at its best point. */
  saturation: number;
  /** The saturation loads are taken against. */
  loadBasis: number;
  loads: { load: number; rate: number; meanStretch: number; p95S: number; p95OverFloor: number }[];
  capacity: { scale: number; sloS: number; capacity: number; time: { gpu: string; concurrency: number; instances: number }[] }[];
}

const CONCURRENCY = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256];
const H100_EXTRA = [384, 512, 768, 1024];

export function scenarioFrontier(s: Scenario, baseSloS: number, measuredSaturation: number | undefined, o: FrontierOptions): ScenarioFrontier {
  const workload = buildWorkload(s.source, o.workflows, 1, o.seed);
  const floor = new FloorModel(s.engine, s.instances);
  const mix = workload.flatMap((w) => w.spec.stages.flatMap((st) => st.calls));
  const curves: ScenarioFrontier["curves"] = [];
  for (const inst of s.instances) {
    const known = curves.find((c) => c.gpu === inst.gpu);
    if (known !== undefined) {
      known.count += 1;
      continue;
    }
    const concurrencies = [...CONCURRENCY, ...H100_EXTRA].filter((c) => c <= inst.capacity.maxSeqs);
    curves.push({ gpu: inst.gpu, count: 1, points: operatingCurve(s.engine, inst, mix, floor, { concurrencies, window: o.window, seed: o.seed }) });
  }
  const supply: Supply[] = curves.map((c) => ({ count: c.count, points: c.points }));
  const frontier = new PoolFrontier(curves.flatMap((c) => Array.from({ length: c.count }, () => c.points)));
  const ws: WorkflowWork[] = workload.map((w) => ({ stages: w.spec.stages.map((st) => st.calls.map((c) => floor.callSeconds(c))) }));
  const perWorkflow = ws.reduce((sum, w) => sum + w.stages.flat().reduce((a, b) => a + b, 0), 0) / ws.length;
  const floorP95S = sortedPercentile(ws.map(criticalSeconds).sort((a, b) => a - b), 0.95);
  const saturation = frontier.maxWorkRate / perWorkflow;
  const loadBasis = measuredSaturation ?? saturation;
  const loads = o.loads.map((load) => {
    const rate = load * loadBasis;
    const p95S = p95Bound(ws, supply, rate);
    return { load, rate, meanStretch: frontier.minStretch(rate * perWorkflow), p95S, p95OverFloor: p95S / floorP95S };
  });
  const capacity = o.scales.map((scale) => {
    const sloS = scale * baseSloS;
    const demand = stretchDemand(ws, sloS, 0.95);
    const plan = demand === null ? { multiple: 0, time: [] } : servingPlan(supply, demand);
    const time = plan.time.map((t) => ({ gpu: curves[t.type]?.gpu ?? "?", concurrency: t.concurrency, instances: t.instances }));
    return { scale, sloS, capacity: plan.multiple, time };
  });
  return { curves, floorP95S, saturation, loadBasis, loads, capacity };
}
