import { describe, expect, it } from "vitest";
import {
  type CalibrationState,
  CalibrationStateSchema,
  calibratedCost,
  DEFAULT_CALIBRATION_CONFIG,
  newCalibration,
  observeService,
  type ServiceObservation,
  solveSpd,
} from "../../src/core/calibration";
import { type CostCoeffs, defaultCost, estimateSeconds } from "../../src/core/cost-model";
import { createRng, normal, type Rng, uniformInt } from "../../src/core/rng";

/** CHESS-like (input, output) means per step type (DESIGN section 1). */
const CHESS_CALLS: readonly [number, number][] = [
  [300, 5],
  [670, 45],
  [11_000, 650],
  [7_000, 130],
  [1_100, 100],
  [1_000, 30],
];
/** Long prompts, short answers (summaries, classification): the calls that expose prefill. */
const PREFILL_HEAVY: readonly [number, number][] = [[8_000, 1], [16_000, 4], [4_000, 2]];

interface Truth {
  cost: CostCoeffs;
  /** Seconds per output token per extra co-running sequence. */
  interferenceS: number;
}

function service(rng: Rng, truth: Truth, mix: readonly [number, number][], outlierRate: number): ServiceObservation {
  const [inMean, outMean] = mix[uniformInt(rng, mix.length)] ?? [1000, 100];
  const inputTokens = Math.max(1, Math.round(inMean * (0.7 + 0.6 * rng.next())));
  const outputTokens = Math.max(1, Math.round(outMean * (0.5 + rng.next())));
  const concurrency = 1 + uniformInt(rng, 8);
  const clean =
    estimateSeconds(truth.cost, inputTokens, outputTokens) + truth.interferenceS * outputTokens * (concurrency - 1);
  const noisy = clean * Math.exp(0.05 * normal(rng));
  // Stragglers: preemption and recompute, a retried request, a slow network path.
  const serviceS = rng.next() < outlierRate ? noisy * (2 + 3 * rng.next()) : noisy;
  return { inputTokens, outputTokens, serviceS, concurrency };
}

function feed(s0: CalibrationState, n: number, rng: Rng, truth: Truth, mix = CHESS_CALLS, outliers = 0.05): CalibrationState {
  let s = s0;
  for (let i = 0; i < n; i++) s = observeService(s, service(rng, truth, mix, outliers));
  return s;
}

function relErr(a: number, b: number): number {
  return Math.abs(a / b - 1);
}

const a100 = defaultCost("A100");
const slowDecode: Truth = { cost: { ...a100, decodeS: 1.5 * a100.decodeS }, interferenceS: 0.03 * 1.5 * a100.decodeS };

describe("solveSpd", () => {
  it("solves a small SPD system and refuses a singular one", () => {
    const x = solveSpd([4, 2, 2, 3], [2, 1]);
    expect(x?.[0]).toBeCloseTo(0.5, 12);
    expect(x?.[1]).toBeCloseTo(0, 12);
    expect(solveSpd([1, 1, 1, 1], [1, 1])).toBeNull();
  });
});

describe("cost model calibration", () => {
  it("starts at the prior and uses it until the minimum sample count", () => {
    const s = newCalibration(a100);
    expect(calibratedCost(s)).toEqual(a100);
    const five = feed(s, 5, createRng(1), slowDecode);
    expect(calibratedCost(five)).toEqual(a100);
    // Even the internal estimate stays near the profile: ridge plus at most 5 bounded steps.
    expect(relErr(five.coeffs.decodeS, a100.decodeS)).toBeLessThanOrEqual(1.05 ** 5 - 1 + 1e-12);
    expect(relErr(five.coeffs.overheadS, a100.overheadS)).toBeLessThanOrEqual(0.3);
    expect(relErr(five.coeffs.prefillS, a100.prefillS)).toBeLessThanOrEqual(0.3);
  });

  it("recovers a 1.5x slower decode from CHESS traffic with noise, 5% outliers and batching", () => {
    const report: string[] = [];
    for (const n of [50, 100, 200, 400]) {
      const errs = { o: 0, p: 0, d: 0 };
      for (let seed = 1; seed <= 20; seed++) {
        const c = calibratedCost(feed(newCalibration(a100), n, createRng(seed), slowDecode));
        errs.o = Math.max(errs.o, relErr(c.overheadS, slowDecode.cost.overheadS));
        errs.p = Math.max(errs.p, relErr(c.prefillS, slowDecode.cost.prefillS));
        errs.d = Math.max(errs.d, relErr(c.decodeS, slowDecode.cost.decodeS));
      }
      report.push(`n=${n}: worst of 20 seeds |rel err| o ${pct(errs.o)}, p ${pct(errs.p)}, d ${pct(errs.d)}`);
      if (n >= 200) {
        expect(errs.d).toBeLessThanOrEqual(0.05);
        expect(errs.o).toBeLessThanOrEqual(0.1);
        expect(errs.p).toBeLessThanOrEqual(0.1);
      }
    }
    const s = feed(newCalibration(a100), 400, createRng(99), slowDecode);
    report.push(`interference q: fitted ${s.coeffs.interferenceS.toExponential(3)} vs true ${slowDecode.interferenceS.toExponential(3)}; down-weighted ${s.downWeighted}/400`);
    console.log(`calibration, A100 with decode x1.5:\n  ${report.join("\n  ")}`);
    expect(relErr(s.coeffs.interferenceS, slowDecode.interferenceS)).toBeLessThanOrEqual(0.25);
  });

  it("without the interference term batching would be blamed on decode", () => {
    // The same server seen only at concurrency 1 gives the same decode: q is what soaks up batching.
    const lone = feed(newCalibration(a100), 400, createRng(5), { ...slowDecode, interferenceS: 0 });
    const busy = feed(newCalibration(a100), 400, createRng(5), slowDecode);
    expect(relErr(calibratedCost(busy).decodeS, calibratedCost(lone).decodeS)).toBeLessThanOrEqual(0.05);
  });

  it("moves prefill and overhead when the traffic exercises them", () => {
    const truth: Truth = { cost: { overheadS: 2 * a100.overheadS, prefillS: 2 * a100.prefillS, decodeS: a100.decodeS }, interferenceS: 0 };
    const mix = [...CHESS_CALLS, ...PREFILL_HEAVY];
    const c = calibratedCost(feed(newCalibration(a100), 600, createRng(8), truth, mix));
    console.log(`calibration, A100 with overhead and prefill x2, prefill-heavy mix, 600 calls: o ${pct(relErr(c.overheadS, truth.cost.overheadS))}, p ${pct(relErr(c.prefillS, truth.cost.prefillS))}, d ${pct(relErr(c.decodeS, truth.cost.decodeS))}`);
    expect(relErr(c.prefillS, truth.cost.prefillS)).toBeLessThanOrEqual(0.15);
    expect(relErr(c.decodeS, truth.cost.decodeS)).toBeLessThanOrEqual(0.05);
  });

  it("a single wild outlier moves each coefficient by at most the step bound", () => {
    const s = feed(newCalibration(a100), 300, createRng(3), slowDecode, CHESS_CALLS, 0);
    const after = observeService(s, { inputTokens: 11_000, outputTokens: 650, serviceS: 1000, concurrency: 1 });
    const f = DEFAULT_CALIBRATION_CONFIG.maxStepFraction;
    for (const k of ["overheadS", "prefillS", "decodeS"] as const) {
      expect(Math.abs(after.coeffs[k] - s.coeffs[k])).toBeLessThanOrEqual(f * s.coeffs[k] + 1e-15);
    }
    // Huber's weight makes it far smaller than the bound in practice.
    expect(relErr(after.coeffs.decodeS, s.coeffs.decodeS)).toBeLessThan(0.01);
    expect(after.downWeighted).toBe(s.downWeighted + 1);
  });

  it("keeps coefficients within [0.25x, 4x] of the prior", () => {
    const wild: Truth = { cost: { overheadS: 0, prefillS: 0, decodeS: 20 * a100.decodeS }, interferenceS: 0 };
    const s = feed(newCalibration(a100), 500, createRng(4), wild, [...CHESS_CALLS, ...PREFILL_HEAVY], 0);
    expect(s.coeffs.decodeS).toBeCloseTo(4 * a100.decodeS, 12);
    expect(s.coeffs.prefillS).toBeGreaterThanOrEqual(0.25 * a100.prefillS - 1e-18);
    expect(s.coeffs.overheadS).toBeGreaterThanOrEqual(0.25 * a100.overheadS - 1e-15);
  });

  it("notices a faster server too, and a profile with zero overhead can still calibrate", () => {
    const l40s = defaultCost("L40S");
    expect(l40s.overheadS).toBe(0);
    const truth: Truth = { cost: { ...l40s, decodeS: 0.7 * l40s.decodeS }, interferenceS: 0 };
    const c = calibratedCost(feed(newCalibration(l40s), 300, createRng(6), truth));
    expect(relErr(c.decodeS, truth.cost.decodeS)).toBeLessThanOrEqual(0.05);
    expect(c.overheadS).toBeLessThanOrEqual(0.01);
  });

  it("ignores a report with a non-finite field", () => {
    const s = feed(newCalibration(a100), 40, createRng(9), slowDecode);
    expect(observeService(s, { inputTokens: 100, outputTokens: 10, serviceS: Number.NaN })).toBe(s);
  });

  it("survives a JSON round trip through its schema and continues identically", () => {
    const s = feed(newCalibration(a100), 100, createRng(7), slowDecode);
    const back = CalibrationStateSchema.parse(JSON.parse(JSON.stringify(s)));
    expect(back).toEqual(s);
    const obs = service(createRng(70), slowDecode, CHESS_CALLS, 0);
    expect(observeService(back, obs)).toEqual(observeService(s, obs));
  });
});

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}
