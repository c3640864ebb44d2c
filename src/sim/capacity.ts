import type { PolicySpec } from "../core/policies";
import { attainment, steadyState } from "./metrics";
import { runScenario, scenarioBaseSlo, type Scenario } from "./scenario";
import { tuneAlpha } from "./tuner";
import type { WorkflowResult } from "./simulator";

export interface CapacityOptions {
  seeds: readonly number[];
  /** Fixed α, or "auto": tune α for SLO attainment at every probed rate (coarse grid). */
  alpha: number | "auto";
  target?: number;
  /** Relative width at which the bisection stops. */
  tolerance?: number;
  maxRate?: number;
  /**
   * Arrivals span at least this many SLOs (and at least minWorkflows workflows), so an overloaded
   * pool's backlog has time to grow past the SLO; a short burst would pass at any rate.
   */
  horizonSlos?: number;
  minWorkflows?: number;
  /** Grid step of the per-probe α search when alpha is "auto". */
  alphaGridStep?: number;
  /**
   * With workflow admission in the scenario: workflows turned away at arrival count as misses ("miss", the
   * default, so shedding cannot buy capacity) or leave the count ("excluded", attainment of the accepted).
   * Either way the steady window is cut by arrival over accepted and refused alike.
   */
  rejected?: "miss" | "excluded";
}

export interface CapacityResult {
  capacity: number;
  probes: { rate: number; attainment: number; alpha: number }[];
}

/**
 * Each seed's steady state. Workflows refused at arrival (admission) enter the steady window by their arrival like
 * the rest, then count as misses (latency ∞) or leave the count.
 */
export function steadyRuns(s: Scenario, policy: Readonly<PolicySpec>, alpha: number, seeds: readonly number[], rejected: "miss" | "excluded"): { perSeed: WorkflowResult[][]; sloS: number } {
  const perSeed: WorkflowResult[][] = [];
  let sloS = 0;
  for (const seed of seeds) {
    const run = runScenario(s, policy, alpha, seed);
    sloS = run.sloS;
    const refused = (run.output.rejected ?? []).map((r): WorkflowResult => ({ id: r.id, arrivalS: r.arrivalS, finishS: r.arrivalS, latencyS: Infinity, calls: 0 }));
    const ids = new Set(refused.map((r) => r.id));
    const steady = steadyState([...run.output.workflows, ...refused]);
    perSeed.push(rejected === "excluded" ? steady.filter((r) => !ids.has(r.id)) : steady);
  }
  return { perSeed, sloS };
}

/** Attainment in steady state, pooled over seeds (steadyRuns). */
export function steadyAttainment(s: Scenario, policy: Readonly<PolicySpec>, alpha: number, seeds: readonly number[], rejected: "miss" | "excluded"): number {
  const { perSeed, sloS } = steadyRuns(s, policy, alpha, seeds, rejected);
  return attainment(perSeed.flat(), sloS);
}

/**
 * Capacity (DESIGN section 5): the highest Poisson rate at which at least 95% of workflows meet the
 * SLO at the scenario's scale, in steady state (first and last 10% of arrivals left out), pooled
 * over seeds, with arrivals spanning `horizonSlos` SLOs. Doubling from a low rate to bracket it,
 * then bisection. A slight overload (a few percent) can still pass within a finite horizon, so the
 * figure errs high by that much, for every policy alike.
 */
export function measureCapacity(scenario: Scenario, policy: Readonly<PolicySpec>, opts: CapacityOptions): CapacityResult {
  const target = opts.target ?? 0.95;
  const tolerance = opts.tolerance ?? 0.03;
  const maxRate = opts.maxRate ?? 64;
  const horizonS = (opts.horizonSlos ?? 10) * scenario.sloScale * scenarioBaseSlo(scenario);
  const probes: CapacityResult["probes"] = [];
  const probe = (rate: number): boolean => {
    const s = { ...scenario, rate, workflows: Math.max(opts.minWorkflows ?? 100, Math.ceil(rate * horizonS)) };
    const alpha =
      opts.alpha === "auto"
        ? tuneAlpha(s, policy, { seeds: opts.seeds.slice(0, 1), objective: { kind: "attainment", sloScale: s.sloScale }, gridStep: opts.alphaGridStep ?? 0.1, refineStep: 0 }).alpha
        : opts.alpha;
    const a = steadyAttainment(s, policy, alpha, opts.seeds, opts.rejected ?? "miss");
    probes.push({ rate, attainment: a, alpha });
    return a >= target;
  };
  let lo = 0;
  let hi = 0.0625;
  while (probe(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > maxRate) return { capacity: lo, probes };
  }
  if (lo === 0) {
    // Even a low rate fails: search downwards so the figure still says how low it is.
    let r = hi / 2;
    while (r > 1e-3 && !probe(r)) r /= 2;
    if (r <= 1e-3) return { capacity: 0, probes };
    lo = r;
    hi = r * 2;
  }
  while ((hi - lo) / hi > tolerance) {
    const mid = (lo + hi) / 2;
    if (probe(mid)) lo = mid;
    else hi = mid;
  }
  return { capacity: lo, probes };
}
