/**
 * The ablation of issue 11: each policy against the physical limits of its scenario (src/sim/limits.ts).
 * One scenario is a pool, a workload source and an engine; per scenario the limits are measured once (the
 * P95 floor, and the saturation throughput as the best completion rate of every policy under overload), then
 * each policy is measured at fractions of that saturation and its capacity at each SLO scale.
 *
 * α, for the policies that have one, is tuned per scenario and load on seeds the figures do not use, as the
 * production tuner tunes it on recent traffic. Capacity is bisected with the α tuned for attainment at 80% load,
 * then α is tuned again at the capacity found and the bisection repeated; the better of the two counts. The
 * tuner sees the load the pool runs at, and under tight SLOs capacity lies far below 80% load, where a larger
 * α (the fast GPUs first) wins: keeping the 80% α cost hexgen 47% of its capacity on chess-trace3. Re-tuning
 * at every probe, as `npm run bench` does, costs ten times more.
 */
import { z } from "zod";
import type { PolicySpec } from "../core/policies";
import { measureCapacity, steadyRuns } from "./capacity";
import { latencyFloor, saturatedCompletionRate } from "./limits";
import { attainment, latencySummary } from "./metrics";
import { runScenario, scenarioBaseSlo, type Scenario } from "./scenario";
import type { WorkflowResult } from "./simulator";
import { tuneAlpha } from "./tuner";
import { buildWorkload } from "./workload";

export const AblationOptionsSchema = z.object({
  seeds: z.array(z.number().int()).min(1),
  tuneSeeds: z.array(z.number().int()).min(1),
  /** Workflows per run at a load point. */
  workflows: z.number().int().positive(),
  /** Load points as fractions of the saturation throughput. */
  loads: z.array(z.number().positive()),
  /** SLO scales for capacity; the load points carry `loadSloScale`. */
  scales: z.array(z.number().positive()),
  loadSloScale: z.number().positive(),
  /** Capacity probes span this many SLOs of arrivals. */
  capacityHorizonSlos: z.number().positive(),
  /** α grid step when tuning (coarser is faster). */
  alphaStep: z.number().positive().max(1),
  /**
   * Also measure capacity with the pool's workflow admission on (core/workflow-admission, its defaults), with the
   * refused counted as misses and, apart, with only the accepted counted: shedding must not buy the figure.
   */
  admission: z.boolean().default(false),
  /** Every run with clairvoyant releases (sim/oracle.ts): what better prediction could buy. */
  oracle: z.boolean().default(false),
});
export type AblationOptions = z.infer<typeof AblationOptionsSchema>;

export const LimitsSchema = z.object({
  floorP50S: z.number(),
  floorP95S: z.number(),
  /** The saturation throughput (workflows/s): the best of `byPolicy`. */
  saturation: z.number(),
  byPolicy: z.record(z.string(), z.number()),
  overloadRate: z.number(),
  /**
   * Per SLO scale: the share of the floor's workflows whose critical path fits the SLO. Above it no scheduler
   * can push attainment, so where it is under 95% capacity at that scale is 0 for every policy.
   */
  withinSloAtFloor: z.record(z.string(), z.number()).optional(),
});
export type Limits = z.infer<typeof LimitsSchema>;

export interface LoadPoint {
  load: number;
  rate: number;
  alpha: number | null;
  p50S: number;
  p95S: number;
  /** P95 over the P95 floor. */
  p95OverFloor: number;
  attainment: number;
  /** The lowest and highest per-seed P95 and attainment: the spread behind the pooled figures. */
  p95RangeS: [number, number];
  attainmentRange: [number, number];
}

export interface PolicyAblation {
  policy: string;
  loads: LoadPoint[];
  /** Per SLO scale: capacity (workflows/s at ≥ 95% attainment) and as a fraction of saturation. */
  capacity: { scale: number; alpha: number | null; capacity: number; ofSaturation: number; withAdmission?: { refusedAsMisses: number; acceptedOnly: number } }[];
}

const tunes = (p: Readonly<PolicySpec>): boolean => p.tunesAlpha;

/** Each seed's steady state, pooled (as capacity pools them), with per-seed P95 and attainment. */
function pooled(s: Scenario, policy: Readonly<PolicySpec>, alpha: number, seeds: readonly number[]): { results: WorkflowResult[]; sloS: number; perSeed: { p95S: number; attainment: number }[] } {
  const { perSeed, sloS } = steadyRuns(s, policy, alpha, seeds, "miss");
  return { results: perSeed.flat(), sloS, perSeed: perSeed.map((steady) => ({ p95S: latencySummary(steady.map((r) => r.latencyS)).p95, attainment: attainment(steady, sloS) })) };
}

const range = (xs: readonly number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

/** The best completion rate under overload over α ∈ {0.5, …, 0.9} for a policy with α (its best configuration). */
function saturatedRate(s: Scenario, policy: Readonly<PolicySpec>, seeds: readonly number[]): number {
  const alphas = tunes(policy) ? [0.5, 0.6, 0.7, 0.8, 0.9] : [0.7];
  let best = 0;
  for (const alpha of alphas) {
    let sum = 0;
    for (const seed of seeds) sum += saturatedCompletionRate(runScenario(s, policy, alpha, seed).output.workflows);
    best = Math.max(best, sum / seeds.length);
  }
  return best;
}

/**
 * The limits of one scenario. Overload: arrivals at `startRate`, doubled until no policy completes more than
 * 60% of them, so every policy is measured with a backlog that never empties.
 */
export function measureLimits(base: Scenario, policies: readonly Readonly<PolicySpec>[], seeds: readonly number[], startRate: number, floorWorkflows: number, scales: readonly number[] = []): Limits {
  const floorLoad = buildWorkload(base.source, floorWorkflows, 1, seeds[0] ?? 1);
  const floor = latencyFloor(base.engine, base.instances, floorLoad);
  const paths = [...floor.perWorkflow.values()];
  const baseSloS = scenarioBaseSlo(base);
  const withinSloAtFloor = Object.fromEntries(scales.map((k) => [String(k), paths.filter((t) => t <= k * baseSloS + 1e-9).length / paths.length]));
  let rate = startRate;
  for (let round = 0; ; round++) {
    const s: Scenario = { ...base, rate, workflows: Math.max(400, Math.ceil(rate * 600)) };
    const byPolicy: Record<string, number> = {};
    for (const p of policies) byPolicy[p.name] = saturatedRate(s, p, seeds);
    const saturation = Math.max(...Object.values(byPolicy));
    if (saturation <= 0.6 * rate || round >= 4) return { floorP50S: floor.p50S, floorP95S: floor.p95S, saturation, byPolicy, overloadRate: rate, withinSloAtFloor };
    rate *= 2;
  }
}

function tunedAlpha(s: Scenario, policy: Readonly<PolicySpec>, o: AblationOptions, objective: "p95" | "attainment"): number | null {
  if (!tunes(policy)) return null;
  const obj = objective === "p95" ? { kind: "p95" as const } : { kind: "attainment" as const, sloScale: s.sloScale };
  return tuneAlpha(s, policy, { seeds: o.tuneSeeds, objective: obj, gridStep: o.alphaStep, refineStep: 0 }).alpha;
}

export function ablatePolicy(base: Scenario, policy: Readonly<PolicySpec>, limits: Limits, o: AblationOptions): PolicyAblation {
  const loads = o.loads.map((load): LoadPoint => {
    const rate = load * limits.saturation;
    const s: Scenario = { ...base, rate, workflows: o.workflows, sloScale: o.loadSloScale };
    const alpha = tunedAlpha(s, policy, o, "p95");
    const { results: steady, sloS, perSeed } = pooled(s, policy, alpha ?? 0, o.seeds);
    const lat = latencySummary(steady.map((r) => r.latencyS));
    return {
      load, rate, alpha, p50S: lat.p50, p95S: lat.p95, p95OverFloor: lat.p95 / limits.floorP95S, attainment: attainment(steady, sloS),
      p95RangeS: range(perSeed.map((x) => x.p95S)), attainmentRange: range(perSeed.map((x) => x.attainment)),
    };
  });
  const capacity = o.scales.map((scale) => {
    const at = (rate: number): Scenario => ({ ...base, sloScale: scale, rate, workflows: o.workflows });
    // With admission, its queue order follows the policy's queue (core/pool-admission).
    const bisect = (alpha: number | null, admission?: "miss" | "excluded"): number =>
      measureCapacity(
        { ...at(0.8 * limits.saturation), ...(admission === undefined ? {} : { admission: { config: {}, bestEffort: false } }) },
        policy,
        { seeds: o.seeds, alpha: alpha ?? 0, horizonSlos: o.capacityHorizonSlos, maxRate: 4 * limits.saturation, tolerance: 0.03, ...(admission === undefined ? {} : { rejected: admission }) },
      ).capacity;
    let alpha = tunedAlpha(at(0.8 * limits.saturation), policy, o, "attainment");
    let cap = bisect(alpha);
    if (alpha !== null) {
      const again = tunedAlpha(at(Math.max(cap, 0.05 * limits.saturation)), policy, o, "attainment");
      const capAgain = again === alpha ? cap : bisect(again);
      if (capAgain > cap) [alpha, cap] = [again, capAgain];
    }
    const withAdmission = o.admission ? { refusedAsMisses: bisect(alpha, "miss"), acceptedOnly: bisect(alpha, "excluded") } : undefined;
    return { scale, alpha, capacity: cap, ofSaturation: cap / limits.saturation, ...(withAdmission === undefined ? {} : { withAdmission }) };
  });
  return { policy: policy.name, loads, capacity };
}
