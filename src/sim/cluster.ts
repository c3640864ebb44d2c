import { defaultCost, type CostCoeffs } from "../core/cost-model";
import { GpuTypeSchema, defaultCapacity, parityKvTokens, type GpuType, type InstanceCapacity } from "../core/gpu";
import type { AdmissionLimits } from "../core/admission";
import type { InstanceInfo } from "../core/estimator";

export interface SimInstance extends InstanceInfo {
  capacity: InstanceCapacity;
  /** The serving system's admission limits (core/admission); absent, the engine takes straight from the queue. */
  admission?: AdmissionLimits;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** "A100,A100,A6000,L40S" or with counts "A100x3,L40Sx2"; ids are gpu-lowercase + index. */
export function parseCluster(text: string): ParseResult<GpuType[]> {
  const gpus: GpuType[] = [];
  for (const raw of text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const m = /^([A-Za-z0-9]+?)(?:[x×](\d+))?$/.exec(raw);
    const name = GpuTypeSchema.safeParse(m?.[1]?.toUpperCase());
    const count = m?.[2] === undefined ? 1 : Number(m[2]);
    if (!name.success) return { ok: false, error: `unknown GPU "${raw}" (known: ${GpuTypeSchema.options.join(", ")})` };
    if (!Number.isInteger(count) || count < 1 || count > 1000) return { ok: false, error: `bad count in "${raw}"` };
    for (let i = 0; i < count; i++) gpus.push(name.data);
  }
  if (gpus.length === 0) return { ok: false, error: "empty cluster" };
  return { ok: true, value: gpus };
}

export const REFERENCE_POOL: readonly GpuType[] = ["A100", "A100", "A6000", "L40S"];

export function buildInstances(gpus: readonly GpuType[], engine: "vllm" | "parity" = "vllm", costs?: Partial<Record<GpuType, CostCoeffs>>): SimInstance[] {
  return gpus.map((gpu, i) => {
    const cap = defaultCapacity(gpu);
    const kvTokens = engine === "parity" ? parityKvTokens(gpu) : cap.kvTokens;
    return {
      id: `${gpu.toLowerCase()}-${i}`,
      gpu,
      cost: costs?.[gpu] ?? defaultCost(gpu),
      capacityFactor: 1,
      maxTokens: kvTokens,
      capacity: { ...cap, kvTokens },
      // The vllm engine models hexflow's serving path, admission gate included; parity the authors' simulator.
      ...(engine === "vllm" ? { admission: { maxConcurrency: cap.maxSeqs, kvTokens } } : {}),
    };
  });
}
