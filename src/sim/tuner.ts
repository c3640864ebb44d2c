import type { PolicySpec } from "../core/policies";
import { attainment, latencySummary } from "./metrics";
import { runScenario, type Scenario } from "./scenario";
import type { WorkflowResult } from "./simulator";

export type TuneObjective = { kind: "p95" } | { kind: "attainment"; sloScale: number };

export interface AlphaPoint {
  alpha: number;
  p95: number;
  attainment: number;
}

export interface TuneResult {
  alpha: number;
  objective: TuneObjective;
  /** Every α tried, sorted by α. */
  curve: AlphaPoint[];
  simulations: number;
}

export interface TuneOptions {
  seeds: readonly number[];
  objective?: TuneObjective;
  gridStep?: number;
  /** Step of the refinement around the grid's best (0 disables it). */
  refineStep?: number;
}

/** Lower is better. Attainment first, P95 to break its ties (many α share an attainment). */
function score(p: AlphaPoint, obj: TuneObjective): [number, number] {
  return obj.kind === "p95" ? [p.p95, 0] : [-p.attainment, p.p95];
}

function better(a: AlphaPoint, b: AlphaPoint, obj: TuneObjective): boolean {
  const [a1, a2] = score(a, obj);
  const [b1, b2] = score(b, obj);
  return a1 < b1 - 1e-12 || (Math.abs(a1 - b1) <= 1e-12 && a2 < b2);
}

/**
 * α search on the production policy code: a grid over [0, 1] (step 0.05), then a finer grid around
 * the best point. Each α replays the same workloads (same seeds), so the curve compares α alone.
 * The objective pools the workflows of all seeds.
 */
export function tuneAlpha(scenario: Scenario, policy: Readonly<PolicySpec>, opts: TuneOptions): TuneResult {
  const objective = opts.objective ?? { kind: "p95" };
  const gridStep = opts.gridStep ?? 0.05;
  const refineStep = opts.refineStep ?? 0.01;
  const tried = new Map<string, AlphaPoint>();
  let simulations = 0;
  const evaluate = (alphaRaw: number): AlphaPoint => {
    const alpha = Math.round(Math.min(1, Math.max(0, alphaRaw)) * 1e4) / 1e4;
    const key = alpha.toFixed(4);
    const known = tried.get(key);
    if (known) return known;
    const pooled: WorkflowResult[] = [];
    let sloS = 0;
    for (const seed of opts.seeds) {
      const run = runScenario(scenario, policy, alpha, seed);
      simulations += 1;
      sloS = run.baseSloS * (objective.kind === "attainment" ? objective.sloScale : scenario.sloScale);
      pooled.push(...run.output.workflows);
    }
    const point = { alpha, p95: latencySummary(pooled.map((r) => r.latencyS)).p95, attainment: attainment(pooled, sloS) };
    tried.set(key, point);
    return point;
  };
  const steps = Math.round(1 / gridStep);
  let best = evaluate(0);
  for (let i = 1; i <= steps; i++) {
    const p = evaluate(i * gridStep);
    if (better(p, best, objective)) best = p;
  }
  if (refineStep > 0) {
    const center = best.alpha;
    for (let a = center - gridStep + refineStep; a < center + gridStep - 1e-9; a += refineStep) {
      const p = evaluate(a);
      if (better(p, best, objective)) best = p;
    }
  }
  const curve = [...tried.values()].sort((a, b) => a.alpha - b.alpha);
  return { alpha: best.alpha, objective, curve, simulations };
}
