/**
 * Self-calibrating cost model (issue 6, deliverable 4): a robust running fit of one instance's
 * t̂ = overheadS + prefillS·in + decodeS·out from its observed service times, with its GPU profile as
 * the prior, so that a server slower or faster than its type's default is noticed.
 *
 * Model fitted: serviceS ≈ o + p·in + d·out + q·out·(c − 1), where c is the call's concurrency: the
 * mean number of sequences running on the instance during the call, itself included (the count at
 * admission is an acceptable proxy; omitted means 1). Why the extra term: on vLLM a call batched
 * with others decodes slower (every step reads the other sequences' KV), so fitting (o, p, d) to raw
 * service times of a busy server would blame batching on the hardware and inflate d. The cost model
 * has no batch term (it prices a lone call, and the simulator's engine adds batching itself), so q
 * absorbs the interference and `calibratedCost` returns only (o, p, d). Limits: interference is
 * taken as linear in the number of co-runners (the engine's depends on their context lengths), and a
 * server that always runs at the same concurrency cannot tell d from q apart; the ridge below then
 * keeps d near the profile rather than guessing.
 *
 * Estimator: exponentially-forgotten weighted least squares on relative error (each sample divided by
 * the prior's prediction, as the profile fit does: calls span 0.1 s to 30 s and absolute errors would
 * let the longest calls decide everything), kept as sufficient statistics (4×4 normal matrix and
 * right-hand side) and solved with a ridge toward the prior: the prior counts as `priorStrength`
 * samples whose prediction is all that term. So a coefficient the traffic hardly exercises stays near
 * the profile: on CHESS calls decode is 80-99% of each call's time on an A100, so d moves quickly and
 * o, p only when calls with long prompts and short outputs are common.
 * Robustness: each sample gets a Huber weight min(1, k·s/|r|) from its relative residual r against
 * the current coefficients and a running residual scale s (from a tracked median of |r|, which the
 * stragglers cannot inflate), so a straggler (preemption, a retry, a GC pause) pulls by at most k·s.
 * Bounded steps: each sample moves a coefficient by at most `maxStepFraction` of max(its value, its
 * unit), and coefficients stay within [prior/boundFactor, boundFactor·max(prior, unit)] (the unit
 * lets a zero prior, such as the L40S overhead, move at all). `calibratedCost` returns the prior
 * until `minSamples` services have been seen.
 */
import { z } from "zod";
import { type CostCoeffs, CostCoeffsSchema, estimateSeconds } from "./cost-model";

export const CalibrationConfigSchema = z.object({
  /** Per-sample decay of the sufficient statistics; 0.995 is a memory of ~200 calls. */
  forgetting: z.number().gt(0).max(1),
  priorStrength: z.number().positive(),
  interferencePriorStrength: z.number().positive(),
  huberK: z.number().positive(),
  maxStepFraction: z.number().positive(),
  boundFactor: z.number().gt(1),
  minSamples: z.number().int().nonnegative(),
});
export type CalibrationConfig = z.infer<typeof CalibrationConfigSchema>;

export const DEFAULT_CALIBRATION_CONFIG: CalibrationConfig = {
  forgetting: 0.995,
  priorStrength: 1,
  interferencePriorStrength: 1,
  huberK: 2,
  maxStepFraction: 0.05,
  boundFactor: 4,
  minSamples: 30,
};

const DIM = 4;

export const CalibrationStateSchema = z.object({
  prior: CostCoeffsSchema,
  /** Current estimates: (o, p, d) plus q, seconds per output token per extra co-running sequence. */
  coeffs: CostCoeffsSchema.extend({ interferenceS: z.number().nonnegative() }),
  /** Σ w·z·zᵀ (row-major 4×4) and Σ w·z·t in scaled, relative units, exponentially forgotten. */
  normal: z.array(z.number()).length(DIM * DIM),
  rhs: z.array(z.number()).length(DIM),
  /** Running scale of the relative residuals (≈ their standard deviation for Gaussian noise). */
  residualScale: z.number().positive(),
  samples: z.number().int().nonnegative(),
  /** Samples that were down-weighted as outliers. */
  downWeighted: z.number().int().nonnegative(),
});
export type CalibrationState = z.infer<typeof CalibrationStateSchema>;

export const ServiceObservationSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  serviceS: z.number().nonnegative(),
  concurrency: z.number().min(1).optional(),
});
export type ServiceObservation = z.infer<typeof ServiceObservationSchema>;

const INITIAL_RESIDUAL_SCALE = 0.05;
const MIN_RESIDUAL_SCALE = 0.01;
/** Multiplicative step of the residual-scale tracker per sample. */
const SCALE_RATE = 0.05;
const MEDIAN_ABS_PER_SIGMA = 0.6745;

export function newCalibration(prior: CostCoeffs): CalibrationState {
  return {
    prior: { ...prior },
    coeffs: { ...prior, interferenceS: 0 },
    normal: new Array<number>(DIM * DIM).fill(0),
    rhs: new Array<number>(DIM).fill(0),
    residualScale: INITIAL_RESIDUAL_SCALE,
    samples: 0,
    downWeighted: 0,
  };
}

/** Units per coefficient, so that the regression is well conditioned and a zero prior can still move. */
function units(prior: CostCoeffs): number[] {
  const d = Math.max(prior.decodeS, 1e-4);
  return [Math.max(prior.overheadS, 0.01), Math.max(prior.prefillS, 1e-7), d, 0.1 * d];
}

function asVector(c: CalibrationState["coeffs"]): number[] {
  return [c.overheadS, c.prefillS, c.decodeS, c.interferenceS];
}

function bounds(prior: CostCoeffs, f: number): { lo: number[]; hi: number[] } {
  const u = units(prior);
  const p = [prior.overheadS, prior.prefillS, prior.decodeS];
  const lo = p.map((x) => x / f);
  const hi = p.map((x, j) => f * Math.max(x, u[j] ?? 0));
  // Interference: from none up to a doubling of decode per extra co-runner.
  return { lo: [...lo, 0], hi: [...hi, f * Math.max(prior.decodeS, 1e-4)] };
}

export function observeService(
  state: CalibrationState,
  obs: ServiceObservation,
  config: CalibrationConfig = DEFAULT_CALIBRATION_CONFIG,
): CalibrationState {
  // A corrupt report must not poison the statistics for good.
  if (![obs.inputTokens, obs.outputTokens, obs.serviceS, obs.concurrency ?? 1].every(Number.isFinite)) return state;
  const { prior } = state;
  const u = units(prior);
  const extra = Math.max(0, (obs.concurrency ?? 1) - 1);
  const x = [1, obs.inputTokens, obs.outputTokens, obs.outputTokens * extra];
  // The prior's lone-call prediction fixes the relative scale, so the weighting never chases the fit.
  const ref = Math.max(estimateSeconds(prior, obs.inputTokens, obs.outputTokens), 1e-3);
  const z = x.map((xi, j) => (xi * (u[j] ?? 1)) / ref);
  const t = obs.serviceS / ref;
  const theta = asVector(state.coeffs);
  const beta = theta.map((th, j) => th / (u[j] ?? 1));
  const r = t - dot(z, beta);
  const cut = config.huberK * state.residualScale;
  const w = Math.abs(r) <= cut ? 1 : cut / Math.abs(r);
  // Tracks the running median of |r| (a stochastic quantile step), which outliers cannot inflate;
  // for Gaussian noise median |r| = 0.674 σ.
  const medianAbs = state.residualScale * MEDIAN_ABS_PER_SIGMA;
  const residualScale = Math.max(
    MIN_RESIDUAL_SCALE,
    state.residualScale * Math.exp(Math.abs(r) > medianAbs ? SCALE_RATE : -SCALE_RATE),
  );

  const lambda = config.forgetting;
  const normal = state.normal.map((a, k) => lambda * a + w * (z[Math.floor(k / DIM)] ?? 0) * (z[k % DIM] ?? 0));
  const rhs = state.rhs.map((b, j) => lambda * b + w * (z[j] ?? 0) * t);

  // Ridge toward the prior (q's prior is 0, and weaker: nothing is known about a server's interference).
  const priorBeta = [prior.overheadS, prior.prefillS, prior.decodeS, 0].map((p, j) => p / (u[j] ?? 1));
  const ridge = [config.priorStrength, config.priorStrength, config.priorStrength, config.interferencePriorStrength];
  const m = normal.map((a, k) => (Math.floor(k / DIM) === k % DIM ? a + (ridge[k % DIM] ?? 0) : a));
  const v = rhs.map((b, j) => b + (ridge[j] ?? 0) * (priorBeta[j] ?? 0));
  const solved = solveSpd(m, v);

  const { lo, hi } = bounds(prior, config.boundFactor);
  const next = theta.map((th, j) => {
    const target = solved === null ? th : (solved[j] ?? 0) * (u[j] ?? 1);
    const maxStep = config.maxStepFraction * Math.max(th, u[j] ?? 0);
    const stepped = th + Math.min(maxStep, Math.max(-maxStep, target - th));
    return Math.min(hi[j] ?? stepped, Math.max(lo[j] ?? stepped, stepped));
  });
  return {
    prior,
    coeffs: {
      overheadS: next[0] ?? prior.overheadS,
      prefillS: next[1] ?? prior.prefillS,
      decodeS: next[2] ?? prior.decodeS,
      interferenceS: next[3] ?? 0,
    },
    normal,
    rhs,
    residualScale,
    samples: state.samples + 1,
    downWeighted: state.downWeighted + (w < 1 ? 1 : 0),
  };
}

/** The lone-call cost model to schedule and simulate with: the prior until `minSamples` are in. */
export function calibratedCost(
  state: CalibrationState,
  config: CalibrationConfig = DEFAULT_CALIBRATION_CONFIG,
): CostCoeffs {
  if (state.samples < config.minSamples) return { ...state.prior };
  const { overheadS, prefillS, decodeS } = state.coeffs;
  return { overheadS, prefillS, decodeS };
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0);
  return s;
}

/** Cholesky solve of a symmetric positive-definite n×n system (row-major); null if not SPD. */
export function solveSpd(m: readonly number[], v: readonly number[]): number[] | null {
  const n = v.length;
  const l = new Array<number>(n * n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = m[i * n + j] ?? 0;
      for (let k = 0; k < j; k++) s -= (l[i * n + k] ?? 0) * (l[j * n + k] ?? 0);
      if (i === j) {
        if (!(s > 0)) return null;
        l[i * n + i] = Math.sqrt(s);
      } else {
        l[i * n + j] = s / (l[j * n + j] ?? 1);
      }
    }
  }
  const y = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let s = v[i] ?? 0;
    for (let k = 0; k < i; k++) s -= (l[i * n + k] ?? 0) * (y[k] ?? 0);
    y[i] = s / (l[i * n + i] ?? 1);
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i] ?? 0;
    for (let k = i + 1; k < n; k++) s -= (l[k * n + i] ?? 0) * (x[k] ?? 0);
    x[i] = s / (l[i * n + i] ?? 1);
  }
  return x;
}
