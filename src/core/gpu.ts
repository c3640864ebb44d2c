import { z } from "zod";

export const GpuTypeSchema = z.enum(["A100", "A6000", "L40S", "H100"]);
export type GpuType = z.infer<typeof GpuTypeSchema>;
export const GPU_TYPES: readonly GpuType[] = GpuTypeSchema.options;

export const ModelIdSchema = z.enum(["llama-3.1-70b"]);
export type ModelId = z.infer<typeof ModelIdSchema>;
export const DEFAULT_MODEL: ModelId = "llama-3.1-70b";

/**
 * What one vLLM server can hold at once. vLLM's scheduler admits a sequence only while it has
 * a free slot (max_num_seqs) and KV blocks for it; each step processes at most maxBatchedTokens.
 */
export const InstanceCapacitySchema = z.object({
  kvTokens: z.number().int().positive(),
  maxSeqs: z.number().int().positive(),
  maxBatchedTokens: z.number().int().positive(),
  blockSize: z.number().int().positive(),
});
export type InstanceCapacity = z.infer<typeof InstanceCapacitySchema>;

/**
 * Defaults for Llama-3.1-70B in BF16 with tensor parallelism 4 (DESIGN section 5; VLLM_API section 6):
 * about 400k KV tokens on 4xA100-80GB (411k by the roofline table), 60k on 4xL40S or 4xA6000, and
 * 4xH100-80GB like the A100s. Batch limits are vLLM's OpenAI-server defaults: 2048 tokens / 256 seqs
 * on A100, L40S, A6000; 8192 / 1024 on H100 (vllm/engine/arg_utils.py get_batch_defaults).
 */
const CAPACITY_70B_BF16_TP4: Record<GpuType, InstanceCapacity> = {
  A100: { kvTokens: 400_000, maxSeqs: 256, maxBatchedTokens: 2048, blockSize: 16 },
  A6000: { kvTokens: 60_000, maxSeqs: 256, maxBatchedTokens: 2048, blockSize: 16 },
  L40S: { kvTokens: 60_000, maxSeqs: 256, maxBatchedTokens: 2048, blockSize: 16 },
  H100: { kvTokens: 411_000, maxSeqs: 1024, maxBatchedTokens: 8192, blockSize: 16 },
};

/**
 * The authors' simulator put the 70B model on one GPU with 4-bit weights and 4-bit KV
 * (memory_planner.py: blocks = (vmemory - weights) / block bytes): 70.6e9 params x 0.5 B = 35.3 GB of
 * weights, 81,920 B of KV per token. Used by the parity engine only.
 */
export function parityKvTokens(gpu: GpuType): number {
  const vmemBytes: Record<GpuType, number> = { A100: 80e9, A6000: 48e9, L40S: 48e9, H100: 80e9 };
  return Math.floor((vmemBytes[gpu] - 35.3e9) / 81_920);
}

export function defaultCapacity(gpu: GpuType, _model: ModelId = DEFAULT_MODEL): InstanceCapacity {
  return CAPACITY_70B_BF16_TP4[gpu];
}

/**
 * Extra decode cost per token of KV context read in a step, relative to reading the weights once:
 * kv bytes per token / weight bytes (320 KiB / 141 GB for Llama-3.1-70B BF16). At 32 sequences of
 * 2k context this adds 15%, the shape of the roofline table (26 ms at batch 1, 30 ms at batch 32).
 */
export const KV_READ_FACTOR_PER_TOKEN: Record<ModelId, number> = {
  "llama-3.1-70b": 327_680 / 141e9,
};
