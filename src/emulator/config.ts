/**
 * What one emulated vLLM server is: its GPU, model, clock and limits. The engine's timing and
 * capacity come from the same defaults the simulator uses, so an emulated instance and a simulated
 * one of the same GPU type agree.
 */
import { z } from "zod";
import { defaultCost, type CostCoeffs } from "../core/cost-model";
import { DEFAULT_MODEL, GpuTypeSchema, ModelIdSchema, defaultCapacity, type InstanceCapacity, type ModelId } from "../core/gpu";

export const EmulatorOptionsSchema = z.object({
  gpu: GpuTypeSchema,
  model: ModelIdSchema.default(DEFAULT_MODEL),
  /** 0 picks a free port. */
  port: z.number().int().min(0).max(65_535).default(0),
  host: z.string().min(1).default("127.0.0.1"),
  /** Emulated seconds per wall-clock second. */
  timeScale: z.number().positive().default(1),
  /** Seeds the synthetic output text. */
  seed: z.number().int().default(1),
  /** Probability that a Text-to-SQL candidate answer is wrong (a revision: half of it). */
  sqlErrorRate: z.number().min(0).max(1).default(0.3),
  /** Defaults to the model id; requests must name it (vLLM's --served-model-name). */
  servedModelName: z.string().min(1).optional(),
  /** Defaults to 32768, or the KV capacity if that is smaller (vLLM refuses to start otherwise). */
  maxModelLen: z.number().int().positive().optional(),
  /** Overrides the GPU type's KV capacity in tokens (tests use a small one to force queueing). */
  kvTokens: z.number().int().positive().optional(),
  /**
   * Shortest wall-clock gap between two stream chunks of one request; tokens made in between share a
   * chunk, as vLLM's detokenizer batches them. Default 0 (a chunk per step) at time scale 1 and 25 ms
   * above it: a real server's decode step takes 25-60 ms, so a time-scaled emulator then streams no
   * more chunks per second into the serving path than a real fleet would. A call's last chunk is
   * never held back, so call end times do not change.
   */
  streamIntervalMs: z.number().min(0).max(10_000).optional(),
});
export type EmulatorOptions = z.input<typeof EmulatorOptionsSchema>;

/** The Hugging Face repository vLLM would load, shown as `root` in /v1/models. */
const MODEL_PATHS: Record<ModelId, string> = {
  "llama-3.1-70b": "meta-llama/Llama-3.1-70B-Instruct",
};

const DEFAULT_MAX_MODEL_LEN = 32_768;
const DEFAULT_SCALED_STREAM_INTERVAL_MS = 25;

export interface EmulatorConfig {
  gpu: z.infer<typeof GpuTypeSchema>;
  model: ModelId;
  host: string;
  port: number;
  timeScale: number;
  seed: number;
  sqlErrorRate: number;
  servedModelName: string;
  modelPath: string;
  maxModelLen: number;
  cost: CostCoeffs;
  capacity: InstanceCapacity;
  streamIntervalMs: number;
}

export function resolveConfig(options: EmulatorOptions): EmulatorConfig {
  const o = EmulatorOptionsSchema.parse(options);
  const base = defaultCapacity(o.gpu, o.model);
  const capacity = o.kvTokens === undefined ? base : { ...base, kvTokens: o.kvTokens };
  return {
    gpu: o.gpu,
    model: o.model,
    host: o.host,
    port: o.port,
    timeScale: o.timeScale,
    seed: o.seed,
    sqlErrorRate: o.sqlErrorRate,
    servedModelName: o.servedModelName ?? o.model,
    modelPath: MODEL_PATHS[o.model],
    maxModelLen: o.maxModelLen ?? Math.min(DEFAULT_MAX_MODEL_LEN, capacity.kvTokens),
    cost: defaultCost(o.gpu, o.model),
    capacity,
    streamIntervalMs: o.streamIntervalMs ?? (o.timeScale > 1 ? DEFAULT_SCALED_STREAM_INTERVAL_MS : 0),
  };
}
