/**
 * Tail-latency degradation trigger (issue 6, deliverable 3): asks for an immediate α re-tune when the
 * workflows finishing now do clearly worse than those the last tuning saw, instead of waiting for the cron.
 *
 * Inputs: finished workflows {atS, latencyS, sloS, met}. The statistic is the normalised latency
 * r = latencyS / sloS, so workflows with different SLOs (scales, tenants) are comparable and a
 * shift in r is exactly what erodes attainment (met ⇔ r ≤ 1).
 *
 * Two windows. `reference` is frozen at the last tuning (`rebase`, called after every tuning decision,
 * whether α changed or not); if the pre-tuning window was shorter than `minReference`, the first
 * samples after the rebase top it up. `current` holds the samples since (the rank test uses the last
 * `maxCurrent` within `maxAgeS` seconds), so old traffic ages out and detection does not get slower
 * the longer a tuning lasts.
 *
 * Decision: trigger iff ALL of
 *   1. both windows hold their minimum counts (no decisions on a handful of workflows);
 *   2. a one-sided Mann–Whitney U test (normal approximation with tie correction) says current r is
 *      stochastically larger than reference r at level `alpha`;
 *   3. the shift matters: P95 of r rose by ≥ `minP95Increase` (relative) OR attainment fell by
 *      ≥ `minAttainmentDrop` (absolute share);
 *   4. no trigger or rebase within the last `cooldownS` seconds.
 * Why a rank test: latencies are heavy-tailed (close to log-normal) and the rank test needs no
 * distributional assumption and is insensitive to a few extreme workflows, where a t-test or a raw P95
 * threshold are not. Why the effect-size gate too: a test alone turns any tiny, harmless shift
 * significant once the windows are large; a P95 threshold alone fires on sampling noise (the P95 of
 * 100 samples rests on its top five). Trade-off: the MWU detects a shift of the whole distribution;
 * a degradation confined to the top few percent moves it little, and is left to the P95/attainment
 * gate plus the cron. Independence: consecutive workflows share queue states, so latencies come in
 * bursts; an unadjusted rank test reads a burst as a shift (measured: with lag-1 autocorrelation 0.5
 * the false-positive rate rose from 0.5% to 16% of runs). So the U variance is inflated by each
 * window's AR(1) factor (1+ρ)/(1−ρ), ρ = lag-1 autocorrelation of log(latency/slo) in finish order.
 * This costs some power (a step inside the current window looks like autocorrelation too).
 * Checks on overlapping windows are correlated, so `alpha` is not the false-positive rate per run:
 * test/node/degradation.test.ts measures it on stationary traffic.
 */
import { z } from "zod";
import { sortedPercentile } from "./stats";

export const WorkflowSampleSchema = z.object({
  atS: z.number(),
  latencyS: z.number().nonnegative(),
  sloS: z.number().positive(),
  met: z.boolean(),
});
export type WorkflowSample = z.infer<typeof WorkflowSampleSchema>;

export const DegradationStateSchema = z.object({
  reference: z.array(WorkflowSampleSchema),
  current: z.array(WorkflowSampleSchema),
  /** Time of the last rebase (tuning); null before the first. */
  rebasedAtS: z.number().nullable(),
  /** Time of the last trigger; null if none since the state was created. */
  lastTriggerAtS: z.number().nullable(),
});
export type DegradationState = z.infer<typeof DegradationStateSchema>;

export const DegradationConfigSchema = z.object({
  maxReference: z.number().int().positive(),
  maxCurrent: z.number().int().positive(),
  maxAgeS: z.number().positive(),
  minReference: z.number().int().positive(),
  minCurrent: z.number().int().positive(),
  alpha: z.number().positive().max(0.5),
  minP95Increase: z.number().nonnegative(),
  minAttainmentDrop: z.number().nonnegative(),
  cooldownS: z.number().nonnegative(),
});
export type DegradationConfig = z.infer<typeof DegradationConfigSchema>;

export const DEFAULT_DEGRADATION_CONFIG: DegradationConfig = {
  maxReference: 200,
  maxCurrent: 100,
  maxAgeS: 1800,
  minReference: 50,
  minCurrent: 40,
  alpha: 0.001,
  minP95Increase: 0.2,
  minAttainmentDrop: 0.05,
  cooldownS: 300,
};

export interface DegradationStats {
  nReference: number;
  nCurrent: number;
  /** One-sided MWU p-value (current larger), autocorrelation-adjusted; 1 when not computed. */
  pValue: number;
  /** Lag-1 autocorrelation of log(latency/slo) in each window, in finish order (0 when not computed). */
  rhoReference: number;
  rhoCurrent: number;
  /** P95 of latency/slo in each window (NaN when empty). */
  p95Reference: number;
  p95Current: number;
  /** Share of workflows that met their SLO (NaN when empty). */
  attainmentReference: number;
  attainmentCurrent: number;
}

export interface DegradationDecision {
  trigger: boolean;
  reason: string;
  stats: DegradationStats;
  /** The state to persist: `lastTriggerAtS` is set when `trigger` is true, otherwise the input. */
  state: DegradationState;
}

export function newDegradationState(): DegradationState {
  return { reference: [], current: [], rebasedAtS: null, lastTriggerAtS: null };
}

function lastN<T>(xs: readonly T[], n: number): T[] {
  return xs.length > n ? xs.slice(xs.length - n) : [...xs];
}

/** Records one finished workflow. Samples are expected in (roughly) time order. */
export function observe(
  state: DegradationState,
  sample: WorkflowSample,
  config: DegradationConfig = DEFAULT_DEGRADATION_CONFIG,
): DegradationState {
  if (state.reference.length < config.minReference) {
    return { ...state, reference: [...state.reference, sample] };
  }
  const fresh = state.current.filter((s) => s.atS >= sample.atS - config.maxAgeS);
  fresh.push(sample);
  // Kept longer than the test window so that a rebase can freeze a full reference.
  return { ...state, current: lastN(fresh, Math.max(config.maxCurrent, config.maxReference)) };
}

/** Freezes what the tuning saw as the new reference; call after every tuning decision. */
export function rebase(
  state: DegradationState,
  nowS: number,
  config: DegradationConfig = DEFAULT_DEGRADATION_CONFIG,
): DegradationState {
  // The reference is the recent traffic: the current window, or if that is still short, the old
  // reference's tail followed by it (the tuning looked at both).
  const recent = [...state.reference, ...state.current].filter((s) => s.atS >= nowS - config.maxAgeS);
  return { ...state, reference: lastN(recent, config.maxReference), current: [], rebasedAtS: nowS };
}

export function check(
  state: DegradationState,
  nowS: number,
  config: DegradationConfig = DEFAULT_DEGRADATION_CONFIG,
): DegradationDecision {
  const current = lastN(state.current, config.maxCurrent).filter((s) => s.atS >= nowS - config.maxAgeS);
  const ref = sortedRatios(state.reference);
  const cur = sortedRatios(current);
  const stats: DegradationStats = {
    nReference: ref.length,
    nCurrent: cur.length,
    pValue: 1,
    rhoReference: 0,
    rhoCurrent: 0,
    p95Reference: sortedPercentile(ref, 0.95),
    p95Current: sortedPercentile(cur, 0.95),
    attainmentReference: attainment(state.reference),
    attainmentCurrent: attainment(current),
  };
  const no = (reason: string): DegradationDecision => ({ trigger: false, reason, stats, state });
  if (ref.length < config.minReference) return no(`reference has ${ref.length} < ${config.minReference} samples`);
  if (cur.length < config.minCurrent) return no(`current window has ${cur.length} < ${config.minCurrent} samples`);
  stats.rhoReference = lag1Autocorrelation(state.reference);
  stats.rhoCurrent = lag1Autocorrelation(current);
  stats.pValue = mannWhitneyGreaterP(ref, cur, varianceInflation(stats.rhoReference), varianceInflation(stats.rhoCurrent));
  const p95Rise = stats.p95Current / stats.p95Reference - 1;
  const attainmentDrop = stats.attainmentReference - stats.attainmentCurrent;
  const shift = `p=${stats.pValue.toExponential(2)}, P95(latency/SLO) ${fmt(stats.p95Reference)} -> ${fmt(stats.p95Current)}, attainment ${fmt(stats.attainmentReference)} -> ${fmt(stats.attainmentCurrent)}`;
  if (stats.pValue >= config.alpha) return no(`no significant shift (${shift})`);
  // A zero reference P95 makes the ratio infinite: any significant rise from zero latency matters.
  const bigEnough = !(p95Rise < config.minP95Increase) || attainmentDrop >= config.minAttainmentDrop;
  if (!bigEnough) return no(`significant but small shift (${shift})`);
  const since = Math.max(state.lastTriggerAtS ?? -Infinity, state.rebasedAtS ?? -Infinity);
  if (nowS - since < config.cooldownS) return no(`degraded but in cooldown until ${fmt(since + config.cooldownS)} s (${shift})`);
  return { trigger: true, reason: `degraded: ${shift}`, stats, state: { ...state, lastTriggerAtS: nowS } };
}

/** latency/slo ascending; a typed array sorts numerically without a comparator (checks run often). */
function sortedRatios(samples: readonly WorkflowSample[]): number[] {
  const r = new Float64Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    r[i] = s === undefined ? 0 : s.latencyS / s.sloS;
  }
  return Array.from(r.sort());
}

function attainment(samples: readonly WorkflowSample[]): number {
  if (samples.length === 0) return Number.NaN;
  return samples.filter((s) => s.met).length / samples.length;
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : String(x);
}

/** Pearson lag-1 autocorrelation of log(latency/slo), in the order the samples finished. */
function lag1Autocorrelation(samples: readonly WorkflowSample[]): number {
  const x = samples.map((s) => Math.log(Math.max(s.latencyS, 1e-9) / s.sloS));
  const n = x.length;
  if (n < 3) return 0;
  let m = 0;
  for (const v of x) m += v;
  m /= n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const d = (x[i] ?? m) - m;
    den += d * d;
    if (i > 0) num += d * ((x[i - 1] ?? m) - m);
  }
  return den > 0 ? num / den : 0;
}

/**
 * AR(1) variance inflation of a mean, (1+ρ)/(1−ρ). Negative ρ is ignored (it would make the test
 * bolder) and ρ is capped so that a window that is one long burst still counts for something.
 */
function varianceInflation(rho: number): number {
  const r = Math.min(0.9, Math.max(0, rho));
  return (1 + r) / (1 - r);
}

/**
 * One-sided Mann–Whitney U p-value for H1 "b tends to be larger than a", both sorted ascending.
 * Normal approximation with continuity and tie corrections (fine for n ≥ ~20 per side, which the
 * minimum counts guarantee). `inflateA`/`inflateB` (≥ 1) widen the variance for serially correlated
 * samples: Var(U) ≈ n_a·n_b/12 · (n_b·f_a + n_a·f_b), which is the textbook variance when f = 1.
 */
export function mannWhitneyGreaterP(a: readonly number[], b: readonly number[], inflateA = 1, inflateB = 1): number {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return 1;
  // Merge the two sorted lists, assigning mid-ranks to ties; sum b's ranks and the tie term.
  let i = 0;
  let j = 0;
  let rank = 0;
  let rankSumB = 0;
  let tieTerm = 0;
  while (i < n1 || j < n2) {
    const va = i < n1 ? (a[i] ?? Infinity) : Infinity;
    const vb = j < n2 ? (b[j] ?? Infinity) : Infinity;
    const v = Math.min(va, vb);
    let ca = 0;
    let cb = 0;
    while (i < n1 && a[i] === v) { i++; ca++; }
    while (j < n2 && b[j] === v) { j++; cb++; }
    const t = ca + cb;
    const midRank = rank + (t + 1) / 2;
    rankSumB += cb * midRank;
    tieTerm += t * t * t - t;
    rank += t;
  }
  const n = n1 + n2;
  const u = rankSumB - (n2 * (n2 + 1)) / 2;
  const meanU = (n1 * n2) / 2;
  const inflation = (n2 * inflateA + n1 * inflateB) / n;
  const varU = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))) * inflation;
  if (varU <= 0) return 1;
  const z = (u - meanU - 0.5) / Math.sqrt(varU);
  return upperNormalTail(z);
}

/** P(Z > z) for a standard normal. */
function upperNormalTail(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

function erfc(x: number): number {
  // Numerical Recipes' erfcc: Chebyshev fit, fractional error < 1.2e-7 everywhere.
  const t = 1 / (1 + 0.5 * Math.abs(x));
  const y =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? y : 2 - y;
}
