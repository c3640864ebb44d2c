import { z } from "zod";
import { DEFAULT_MODEL, type GpuType, type ModelId } from "./gpu";

/** t̂ = overheadS + prefillS * input tokens + decodeS * output tokens (DESIGN section 2). */
export const CostCoeffsSchema = z.object({
  overheadS: z.number().nonnegative(),
  prefillS: z.number().nonnegative(),
  decodeS: z.number().positive(),
});
export type CostCoeffs = z.infer<typeof CostCoeffsSchema>;

/**
 * Llama-3.1-70B single-request latency fitted to ../shared/data/profiles/llama31-70b-chess
 * (484 measured (input, output) pairs per GPU; `npm run fit:reference` reproduces the numbers).
 * Least squares on relative error, coefficients constrained non-negative. Median / p90 relative
 * error of the fit: A100 2.2% / 5.8%, A6000 1.1% / 1.9%, L40S 1.1% / 2.2%.
 * H100 is an ESTIMATE from public specs, not a measurement: decode scaled from the A100's by
 * HBM bandwidth (2.04 -> 3.35 TB/s), prefill by dense BF16 compute (312 -> 989 TFLOPS).
 */
export const DEFAULT_COSTS: Record<ModelId, Record<GpuType, CostCoeffs>> = {
  "llama-3.1-70b": {
    A100: { overheadS: 0.043586, prefillS: 6.6375e-6, decodeS: 0.038736 },
    A6000: { overheadS: 0.0006539, prefillS: 12.901e-6, decodeS: 0.059799 },
    L40S: { overheadS: 0, prefillS: 8.1021e-6, decodeS: 0.055313 },
    H100: { overheadS: 0.043586, prefillS: 6.6375e-6 * (312 / 989), decodeS: 0.038736 * (2.039 / 3.35) },
  },
};

/**
 * The fixed decode seconds per token of the authors' simulator (obtain_latency.py); in parity mode
 * the rest of each measured latency is counted as prefill.
 */
export const PARITY_DECODE_S: Record<GpuType, number> = { A100: 0.035, A6000: 0.058, L40S: 0.0545, H100: 0.035 * (2.039 / 3.35) };

export function defaultCost(gpu: GpuType, model: ModelId = DEFAULT_MODEL): CostCoeffs {
  return DEFAULT_COSTS[model][gpu];
}

export function estimateSeconds(c: CostCoeffs, inputTokens: number, outputTokens: number): number {
  return c.overheadS + c.prefillS * inputTokens + c.decodeS * outputTokens;
}
