/**
 * Offline fit of one server's cost profile from a calibration run (scripts/calibrate.ts): the
 * cost model t̂ = overheadS + prefillS·in + decodeS·out (DESIGN section 2) from streamed requests
 * run one at a time, and the batch slope (how the per-token decode time grows with the number of
 * sequences decoding together) from the same decode-heavy request run at several concurrencies.
 *
 * Why streamed timings rather than total latencies: a request's time splits into its time to first
 * token, which depends on the prompt, and its decode span, which depends on the output only. Fitting
 * each to its own equation keeps a slow decode from leaking into the prefill estimate (and the
 * reverse), which a fit of totals alone cannot tell apart when prompts are short.
 *   TTFT          = o + p·in + d·(1 + e)   (the step that ends the prefill samples the first token,
 *                                           and the cost model charges d for every output token)
 *   decode span   = d·(out − 1)            (the first to the last token)
 * where e = ceil(in / N) − 1 is the number of extra engine steps a prompt longer than the chunk
 * budget N (vLLM's max_num_batched_tokens) takes: each step pays a decode step's weight read, as
 * the engine model charges it (src/sim/engine/vllm.ts). e is known from the prompt, so it is a
 * regressor, not an unknown, and p comes out as the true per-token prefill. A lone call whose
 * prompt fits one step totals o + p·in + d·out, exactly the cost model's t̂.
 */
import { solveSpd } from "./calibration";
import type { CostCoeffs } from "./cost-model";
import { sortedPercentile } from "./stats";

/** One measured request, its times on the server's clock (time scale applied, round trip removed). */
export interface RequestTiming {
  inputTokens: number;
  outputTokens: number;
  ttftS: number;
  totalS: number;
  /** Grid point it repeats; requests of one point are summarised together (default: its token counts). */
  point?: string;
}

export interface PointError {
  point: string;
  inputTokens: number;
  outputTokens: number;
  /** Median measured total over the point's repetitions. */
  measuredS: number;
  /** The fitted model's total, chunk steps included. */
  predictedS: number;
  relError: number;
  /** The cost model's t̂ with the fitted coefficients (no chunk term), and its relative error. */
  costModelS: number;
  costModelRelError: number;
}

export interface CostFit {
  coeffs: CostCoeffs;
  points: PointError[];
  medianRelError: number;
  p90RelError: number;
  /** Coefficient of determination of the points' median totals. */
  r2: number;
  requests: number;
  maxNumBatchedTokens: number;
}

/** vLLM's default max_num_batched_tokens on A100, L40S and A6000 (src/core/gpu.ts). */
export const DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048;

/** Engine steps beyond the first that a lone prompt of `input` tokens takes with a chunk budget of `n`. */
export function extraPrefillSteps(input: number, n: number): number {
  return Math.max(0, Math.ceil(input / n) - 1);
}

/**
 * The per-token prefill a chunk-less t̂ must use to price a lone `input`-token prompt exactly:
 * p + d·e/in (each extra chunk step spread over the prompt's tokens).
 */
export function effectivePrefillS(c: CostCoeffs, input: number, n: number): number {
  return c.prefillS + (c.decodeS * extraPrefillSteps(input, n)) / input;
}

/**
 * Non-negative least squares, exact for the few unknowns fitted here: the optimum is the
 * unconstrained least-squares solution on some subset of the variables (the rest at zero), so every
 * subset is tried and the best feasible one kept (2^n solves; n ≤ 6). Columns are scaled to unit
 * RMS first, since a per-token coefficient is 10^4 times smaller than an overhead.
 */
export function nnls(rows: readonly (readonly number[])[], targets: readonly number[]): number[] {
  const n = rows[0]?.length ?? 0;
  if (n > 6) throw new Error(`nnls: ${n} unknowns is more than this exhaustive solver is meant for`);
  const scale = Array.from({ length: n }, (_, j) => Math.sqrt(rows.reduce((s, r) => s + (r[j] ?? 0) ** 2, 0) / Math.max(1, rows.length)) || 1);
  const scaled = rows.map((r) => r.map((x, j) => x / (scale[j] ?? 1)));
  let best: { x: number[]; sse: number } = { x: new Array<number>(n).fill(0), sse: sse(scaled, targets, new Array<number>(n).fill(0)) };
  for (let mask = 1; mask < 1 << n; mask++) {
    const cols = Array.from({ length: n }, (_, j) => j).filter((j) => (mask & (1 << j)) !== 0);
    const k = cols.length;
    const normal = new Array<number>(k * k).fill(0);
    const rhs = new Array<number>(k).fill(0);
    scaled.forEach((r, i) => {
      cols.forEach((a, ia) => {
        rhs[ia] = (rhs[ia] ?? 0) + (r[a] ?? 0) * (targets[i] ?? 0);
        cols.forEach((b, ib) => {
          normal[ia * k + ib] = (normal[ia * k + ib] ?? 0) + (r[a] ?? 0) * (r[b] ?? 0);
        });
      });
    });
    const solved = solveSpd(normal, rhs);
    if (solved === null || solved.some((v) => v < 0)) continue;
    const x = new Array<number>(n).fill(0);
    cols.forEach((c, i) => (x[c] = solved[i] ?? 0));
    const e = sse(scaled, targets, x);
    if (e < best.sse) best = { x, sse: e };
  }
  return best.x.map((v, j) => v / (scale[j] ?? 1));
}

function sse(rows: readonly (readonly number[])[], targets: readonly number[], x: readonly number[]): number {
  return rows.reduce((s, r, i) => s + ((targets[i] ?? 0) - r.reduce((a, v, j) => a + v * (x[j] ?? 0), 0)) ** 2, 0);
}

/** Relative-error weighting: each equation divided by its measured value, so short and long requests count alike. */
function relativeRows(rows: number[][], targets: number[]): { rows: number[][]; targets: number[] } {
  const keep = targets.map((t, i) => (t > 0 && Number.isFinite(t) ? i : -1)).filter((i) => i >= 0);
  return {
    rows: keep.map((i) => (rows[i] ?? []).map((x) => x / (targets[i] ?? 1))),
    targets: keep.map(() => 1),
  };
}

export function fitCostModel(samples: readonly RequestTiming[], maxNumBatchedTokens = DEFAULT_MAX_NUM_BATCHED_TOKENS): CostFit {
  const rows: number[][] = [];
  const targets: number[] = [];
  for (const s of samples) {
    rows.push([1, s.inputTokens, 1 + extraPrefillSteps(s.inputTokens, maxNumBatchedTokens)]);
    targets.push(s.ttftS);
    if (s.outputTokens >= 2) {
      rows.push([0, 0, s.outputTokens - 1]);
      targets.push(s.totalS - s.ttftS);
    }
  }
  const rel = relativeRows(rows, targets);
  if (rel.rows.length < 3) throw new Error("fitCostModel: needs at least 3 usable measurements");
  const [overheadS = 0, prefillS = 0, decodeS = 0] = nnls(rel.rows, rel.targets);
  const coeffs = { overheadS, prefillS, decodeS };
  const points = summarisePoints(samples, coeffs, maxNumBatchedTokens);
  const errs = points.map((p) => p.relError).sort((a, b) => a - b);
  const meanTotal = points.reduce((s, p) => s + p.measuredS, 0) / Math.max(1, points.length);
  const ssTot = points.reduce((s, p) => s + (p.measuredS - meanTotal) ** 2, 0);
  const ssRes = points.reduce((s, p) => s + (p.measuredS - p.predictedS) ** 2, 0);
  return {
    coeffs,
    points,
    medianRelError: sortedPercentile(errs, 0.5),
    p90RelError: sortedPercentile(errs, 0.9),
    r2: ssTot > 0 ? 1 - ssRes / ssTot : Number.NaN,
    requests: samples.length,
    maxNumBatchedTokens,
  };
}

function median(xs: readonly number[]): number {
  return sortedPercentile([...xs].sort((a, b) => a - b), 0.5);
}

function summarisePoints(samples: readonly RequestTiming[], c: CostCoeffs, n: number): PointError[] {
  const groups = new Map<string, RequestTiming[]>();
  for (const s of samples) {
    const key = s.point ?? `${s.inputTokens}x${s.outputTokens}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups].map(([point, g]) => {
    const inputTokens = median(g.map((s) => s.inputTokens));
    const outputTokens = median(g.map((s) => s.outputTokens));
    const measuredS = median(g.map((s) => s.totalS));
    const costModelS = c.overheadS + c.prefillS * inputTokens + c.decodeS * outputTokens;
    const predictedS = costModelS + c.decodeS * extraPrefillSteps(inputTokens, n);
    const err = (x: number) => Math.abs(x - measuredS) / measuredS;
    return { point, inputTokens, outputTokens, measuredS, predictedS, relError: err(predictedS), costModelS, costModelRelError: err(costModelS) };
  });
}

/** One request of the concurrency sweep: its mean inter-token time with `concurrency` requests in flight. */
export interface BatchSample {
  concurrency: number;
  interTokenS: number;
}

export interface BatchSlope {
  /** Per-token decode time of a lone sequence (the fit's intercept). */
  loneDecodeS: number;
  /** Seconds added to the per-token decode time by each extra sequence decoding alongside. */
  slopeS: number;
  /** slopeS / loneDecodeS: the fraction of a lone decode step each extra sequence adds. */
  relativePerSequence: number;
  levels: { concurrency: number; interTokenS: number; requests: number }[];
}

/** interTokenS ≈ loneDecodeS + slopeS·(c − 1), non-negative least squares on relative error; undefined with fewer than 2 levels. */
export function fitBatchSlope(samples: readonly BatchSample[]): BatchSlope | undefined {
  const byLevel = new Map<number, number[]>();
  for (const s of samples) byLevel.set(s.concurrency, [...(byLevel.get(s.concurrency) ?? []), s.interTokenS]);
  if (byLevel.size < 2) return undefined;
  const rel = relativeRows(
    samples.map((s) => [1, s.concurrency - 1]),
    samples.map((s) => s.interTokenS),
  );
  const [loneDecodeS = 0, slopeS = 0] = nnls(rel.rows, rel.targets);
  return {
    loneDecodeS,
    slopeS,
    relativePerSequence: loneDecodeS > 0 ? slopeS / loneDecodeS : Number.NaN,
    levels: [...byLevel]
      .sort(([a], [b]) => a - b)
      .map(([concurrency, xs]) => ({ concurrency, interTokenS: xs.reduce((a, b) => a + b, 0) / xs.length, requests: xs.length })),
  };
}
