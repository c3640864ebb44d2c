import { describe, expect, it } from "vitest";
import { type BatchSample, effectivePrefillS, extraPrefillSteps, fitBatchSlope, fitCostModel, nnls, type RequestTiming } from "../../src/core/cost-fit";
import { type CostCoeffs, defaultCost } from "../../src/core/cost-model";
import { createRng, normal, type Rng } from "../../src/core/rng";

const INPUTS = [128, 512, 1024, 1536, 2048];
const OUTPUTS = [16, 64, 256];

/** A lone streamed request on a server with profile `c`, each part with multiplicative noise `sigma`. */
function request(rng: Rng, c: CostCoeffs, input: number, output: number, sigma: number): RequestTiming {
  const ttftS = (c.overheadS + c.prefillS * input + c.decodeS) * Math.exp(sigma * normal(rng));
  const spanS = c.decodeS * (output - 1) * Math.exp(sigma * normal(rng));
  return { inputTokens: input, outputTokens: output, ttftS, totalS: ttftS + spanS };
}

function grid(seed: number, c: CostCoeffs, sigma: number, reps = 3): RequestTiming[] {
  const rng = createRng(seed);
  return INPUTS.flatMap((i) => OUTPUTS.flatMap((o) => Array.from({ length: reps }, () => request(rng, c, i, o, sigma))));
}

const rel = (a: number, b: number) => Math.abs(a - b) / b;

describe("nnls", () => {
  it("solves an exact system and clamps a coefficient that would go negative", () => {
    const rows = [[1, 0], [0, 1], [1, 1]];
    expect(nnls(rows, [2, 3, 5]).map((x) => Number(x.toFixed(9)))).toEqual([2, 3]);
    // Unconstrained: x0 = -1; constrained, x0 = 0 and x1 takes the best fit alone.
    const x = nnls([[1, 1], [1, 2], [1, 3]], [1, 3, 5]);
    expect(x[0]).toBe(0);
    expect(x[1]).toBeCloseTo(22 / 14, 9);
  });
});

describe("fitCostModel", () => {
  it.each([["A100"], ["A6000"], ["L40S"]] as const)("recovers the %s profile from noise-free timings", (gpu) => {
    const truth = defaultCost(gpu);
    const fit = fitCostModel(grid(1, truth, 0));
    expect(fit.coeffs.decodeS).toBeCloseTo(truth.decodeS, 12);
    expect(fit.coeffs.prefillS).toBeCloseTo(truth.prefillS, 12);
    expect(fit.coeffs.overheadS).toBeCloseTo(truth.overheadS, 9);
    expect(fit.medianRelError).toBeLessThan(1e-9);
    expect(fit.r2).toBeCloseTo(1, 9);
  });

  it("recovers a profile within a few percent under 3% noise, and reports that error", () => {
    const truth = defaultCost("A100");
    const fit = fitCostModel(grid(7, truth, 0.03, 5));
    expect(rel(fit.coeffs.decodeS, truth.decodeS)).toBeLessThan(0.02);
    expect(rel(fit.coeffs.prefillS, truth.prefillS)).toBeLessThan(0.1);
    expect(rel(fit.coeffs.overheadS, truth.overheadS)).toBeLessThan(0.1);
    expect(fit.medianRelError).toBeGreaterThan(0.001);
    expect(fit.medianRelError).toBeLessThan(0.05);
    expect(fit.p90RelError).toBeGreaterThanOrEqual(fit.medianRelError);
    expect(fit.points).toHaveLength(INPUTS.length * OUTPUTS.length);
    expect(fit.r2).toBeGreaterThan(0.99);
  });

  it("keeps a zero overhead at zero instead of going negative", () => {
    const truth = { overheadS: 0, prefillS: 8e-6, decodeS: 0.055 };
    // TTFT 2% low everywhere: an unconstrained intercept would come out negative.
    const samples = grid(3, truth, 0).map((s) => ({ ...s, ttftS: s.ttftS * 0.98, totalS: s.totalS - s.ttftS * 0.02 }));
    const fit = fitCostModel(samples);
    expect(fit.coeffs.overheadS).toBeGreaterThanOrEqual(0);
    expect(fit.coeffs.overheadS).toBeLessThan(1e-3);
  });

  it("flags a poor fit: errors grow when the server is not linear", () => {
    const truth = defaultCost("A100");
    // Quadratic prefill (attention at long context): the linear model must show the misfit.
    const samples = grid(5, truth, 0).map((s) => {
      const extra = 2e-8 * s.inputTokens ** 2;
      return { ...s, ttftS: s.ttftS + extra, totalS: s.totalS + extra };
    });
    expect(fitCostModel(samples).p90RelError).toBeGreaterThan(0.01);
  });

  it("recovers the per-token prefill when long prompts are prefilled in several 2048-token steps", () => {
    const truth = defaultCost("A100");
    // Each chunk beyond the first costs one more engine step, which pays a decode (src/sim/engine/vllm.ts).
    const samples = [128, 1024, 2048, 3000, 4096, 8192].flatMap((input) =>
      [1, 4, 32].map((output) => {
        const ttftS = truth.overheadS + truth.prefillS * input + truth.decodeS * (1 + extraPrefillSteps(input, 2048));
        return { inputTokens: input, outputTokens: output, ttftS, totalS: ttftS + truth.decodeS * (output - 1) };
      }),
    );
    const fit = fitCostModel(samples, 2048);
    expect(rel(fit.coeffs.prefillS, truth.prefillS)).toBeLessThan(1e-9);
    expect(rel(fit.coeffs.overheadS, truth.overheadS)).toBeLessThan(1e-9);
    expect(fit.medianRelError).toBeLessThan(1e-9);
    // t̂ has no chunk term: it misprices the long prompts, and the report says by how much.
    expect(Math.max(...fit.points.map((p) => p.costModelRelError))).toBeGreaterThan(0.1);
    // Ignoring the chunks (one step per prompt) folds them into an inflated "effective" prefill.
    const plain = fitCostModel(samples, Number.POSITIVE_INFINITY);
    expect(plain.coeffs.prefillS).toBeGreaterThan(2 * truth.prefillS);
    expect(effectivePrefillS(truth, 4096, 2048)).toBeCloseTo(truth.prefillS + truth.decodeS / 4096, 15);
    expect(effectivePrefillS(truth, 2048, 2048)).toBe(truth.prefillS);
  });

  it("refuses too few measurements", () => {
    expect(() => fitCostModel([{ inputTokens: 10, outputTokens: 1, ttftS: 0.1, totalS: 0.1 }])).toThrow(/at least 3/);
  });
});

describe("fitBatchSlope", () => {
  it("recovers intercept and slope from a noisy concurrency sweep", () => {
    const rng = createRng(11);
    const lone = 0.0387;
    const slope = 0.0387 * 0.004;
    const samples: BatchSample[] = [1, 2, 4, 8, 16].flatMap((c) =>
      Array.from({ length: c }, () => ({ concurrency: c, interTokenS: (lone + slope * (c - 1)) * Math.exp(0.005 * normal(rng)) })),
    );
    const fit = fitBatchSlope(samples);
    expect(fit).toBeDefined();
    expect(rel(fit?.loneDecodeS ?? 0, lone)).toBeLessThan(0.01);
    expect(rel(fit?.slopeS ?? 0, slope)).toBeLessThan(0.2);
    expect(fit?.levels.map((l) => l.concurrency)).toEqual([1, 2, 4, 8, 16]);
  });

  it("needs two concurrency levels", () => {
    expect(fitBatchSlope([{ concurrency: 1, interTokenS: 0.04 }])).toBeUndefined();
  });
});
