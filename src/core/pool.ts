import { z } from "zod";
import { CostCoeffsSchema, defaultCost } from "./cost-model";
import type { InstanceInfo } from "./estimator";
import { GpuTypeSchema, ModelIdSchema, defaultCapacity } from "./gpu";

/** What an operator registers for one vLLM server. The schema is the type and the API's body. */
export const InstanceRegistrationSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes, at most 63"),
    url: z.url({ protocol: /^https?$/ }),
    gpu: GpuTypeSchema,
    model: ModelIdSchema.default("llama-3.1-70b"),
    /** Upper bound on calls admitted to vLLM at once (default: the server's max_num_seqs); KV claims bound it too (core/admission). */
    maxConcurrency: z.number().int().min(1).max(1024).optional(),
    kvTokens: z.number().int().positive().optional(),
    /** Emulated servers run N times faster than real time; the pool's clock follows (DESIGN section 5). */
    timeScale: z.number().positive().max(10_000).default(1),
    capacityFactor: z.number().positive().max(100).default(1),
    /** Real milliseconds a call may stay admitted before it counts as timed out (the watchdog's bound). */
    requestTimeoutMs: z.number().int().min(1).max(3_600_000).default(600_000),
    cost: CostCoeffsSchema.optional(),
  })
  .strict();
export type InstanceRegistration = z.infer<typeof InstanceRegistrationSchema>;

export const InstanceUpdateSchema = InstanceRegistrationSchema.omit({ id: true, timeScale: true }).partial().strict();
export type InstanceUpdate = z.infer<typeof InstanceUpdateSchema>;

export const InstanceStateSchema = z.enum(["active", "draining"]);

export const InstanceRecordSchema = InstanceRegistrationSchema.extend({
  state: InstanceStateSchema,
  maxConcurrency: z.number().int().min(1),
  kvTokens: z.number().int().positive(),
  cost: CostCoeffsSchema,
  registeredAt: z.number(),
});
export type InstanceRecord = z.infer<typeof InstanceRecordSchema>;

export function toRecord(r: InstanceRegistration, registeredAt: number): InstanceRecord {
  const kvTokens = r.kvTokens ?? defaultCapacity(r.gpu, r.model).kvTokens;
  return {
    ...r,
    state: "active",
    kvTokens,
    maxConcurrency: r.maxConcurrency ?? defaultCapacity(r.gpu, r.model).maxSeqs,
    cost: r.cost ?? defaultCost(r.gpu, r.model),
    registeredAt,
  };
}

export function toInstanceInfo(r: InstanceRecord): InstanceInfo {
  return { id: r.id, gpu: r.gpu, cost: r.cost, capacityFactor: r.capacityFactor, maxTokens: r.kvTokens };
}
