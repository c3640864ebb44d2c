/**
 * vLLM settings per GPU type for Llama-3.1-70B in BF16 on one 4-GPU host (tensor parallelism 4: 141 GB of
 * weights leave no room for KV at TP 2 on 80 GB cards, and do not fit at all on 48 GB ones; VLLM_API.md
 * section 6). The kit launches vLLM with these and registers the same capacity with the coordinator, so
 * hexflow's admission (maxConcurrency, kvTokens) and vLLM's own limits agree.
 */
import { defaultCapacity, type GpuType } from "../src/core/gpu";

export interface GpuHostProfile {
  /** What the datasheet calls it, for comments in the rendered files. */
  label: string;
  tensorParallelSize: number;
  /** vLLM's --max-num-seqs, registered as maxConcurrency. */
  maxNumSeqs: number;
  maxModelLen: number;
  maxNumBatchedTokens: number;
  gpuMemoryUtilization: number;
  /** Registered as kvTokens: what vLLM's KV cache holds at this memory utilisation (src/core/gpu.ts defaults). */
  kvTokens: number;
}

/**
 * 80 GB cards: ~400k KV tokens, room for vLLM's default 256 sequences (A100) and a 32k context; the H100's
 * larger default batch (1024 seqs / 8192 tokens) is halved, since CHESS prompts of 6-12k tokens fill the KV
 * cache long before 1024 sequences run. 48 GB cards (L40S, A6000): ~60k KV tokens, so a 16k context
 * and 64 sequences (one long candidate-generation prompt must not take the whole cache); their memory is
 * pushed to 0.92 because every GB is ~6k tokens of KV.
 */
export const GPU_HOST_PROFILES: Record<GpuType, GpuHostProfile> = {
  A100: { label: "4x A100 80GB", tensorParallelSize: 4, maxNumSeqs: 256, maxModelLen: 32_768, maxNumBatchedTokens: 2048, gpuMemoryUtilization: 0.9, kvTokens: defaultCapacity("A100").kvTokens },
  H100: { label: "4x H100 80GB", tensorParallelSize: 4, maxNumSeqs: 512, maxModelLen: 32_768, maxNumBatchedTokens: 8192, gpuMemoryUtilization: 0.9, kvTokens: defaultCapacity("H100").kvTokens },
  L40S: { label: "4x L40S 48GB", tensorParallelSize: 4, maxNumSeqs: 64, maxModelLen: 16_384, maxNumBatchedTokens: 2048, gpuMemoryUtilization: 0.92, kvTokens: defaultCapacity("L40S").kvTokens },
  A6000: { label: "4x RTX A6000 48GB", tensorParallelSize: 4, maxNumSeqs: 64, maxModelLen: 16_384, maxNumBatchedTokens: 2048, gpuMemoryUtilization: 0.92, kvTokens: defaultCapacity("A6000").kvTokens },
};
