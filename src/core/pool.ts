import { z } from "zod";
import { CostCoeffsSchema, defaultCost } from "./cost-model";
import type { InstanceInfo } from "./estimator";
import { GpuTypeSchema, ModelIdSchema, defaultCapacity } from "./gpu";

/**
 * How the gateway reaches a server (src/upstream/transport.ts): `direct` fetches its url (local runs, the
 * emulator); `vpc` goes through a Workers VPC service binding to a Cloudflare Tunnel (`vpcBinding`, default
 * GPU_VPC); `access` fetches a tunnel hostname behind Cloudflare Access with the service token's headers.
 */
export const TransportSchema = z.enum(["direct", "vpc", "access"]);
export type Transport = z.infer<typeof TransportSchema>;

/** A binding named GPU_VPC or GPU_VPC_<suffix>, so no registration can point calls at another binding (a database, the tuner). */
export const VpcBindingSchema = z.string().regex(/^GPU_VPC(_[A-Z0-9]+)*$/, "GPU_VPC or GPU_VPC_<suffix> (uppercase letters, digits, underscores)");

/**
 * Everything an operator may change after registering. No defaults here: the update is a partial of it,
 * and a default in a partial would reset an unsent field (a PATCH of maxConcurrency must keep the transport).
 */
const InstanceSettingsSchema = z.object({
  url: z.url({ protocol: /^https?$/ }),
  gpu: GpuTypeSchema,
  model: ModelIdSchema,
  /** Upper bound on calls admitted to vLLM at once (default: the server's max_num_seqs); KV claims bound it too (core/admission). */
  maxConcurrency: z.number().int().min(1).max(1024).optional(),
  kvTokens: z.number().int().positive().optional(),
  capacityFactor: z.number().positive().max(100),
  /** Real milliseconds a call may stay admitted before it counts as timed out (the watchdog's bound). */
  requestTimeoutMs: z.number().int().min(1).max(3_600_000),
  cost: CostCoeffsSchema.optional(),
  transport: TransportSchema,
  /** Only with transport "vpc": the service binding that reaches this server (one VPC service per server). */
  vpcBinding: VpcBindingSchema.optional(),
});

/** What an operator registers for one vLLM server. The schema is the type and the API's body. */
export const InstanceRegistrationSchema = InstanceSettingsSchema.extend({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes, at most 63"),
  model: InstanceSettingsSchema.shape.model.default("llama-3.1-70b"),
  /** Emulated servers run N times faster than real time; the pool's clock follows (DESIGN section 5). */
  timeScale: z.number().positive().max(10_000).default(1),
  capacityFactor: InstanceSettingsSchema.shape.capacityFactor.default(1),
  requestTimeoutMs: InstanceSettingsSchema.shape.requestTimeoutMs.default(600_000),
  transport: TransportSchema.default("direct"),
}).strict();
export type InstanceRegistration = z.infer<typeof InstanceRegistrationSchema>;

export const InstanceUpdateSchema = InstanceSettingsSchema.partial().strict();
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

/** `transport` may be left out by callers that build a registration in code (benchmarks, tests): direct. */
export function toRecord(r: Omit<InstanceRegistration, "transport"> & Partial<Pick<InstanceRegistration, "transport">>, registeredAt: number): InstanceRecord {
  const kvTokens = r.kvTokens ?? defaultCapacity(r.gpu, r.model).kvTokens;
  return {
    ...r,
    transport: r.transport ?? "direct",
    state: "active",
    kvTokens,
    maxConcurrency: r.maxConcurrency ?? defaultCapacity(r.gpu, r.model).maxSeqs,
    cost: r.cost ?? defaultCost(r.gpu, r.model),
    registeredAt,
  };
}

/** A record after a PATCH: a vpcBinding left from an earlier "vpc" transport goes when the transport changes. */
export function updatedRecord(r: InstanceRecord, u: InstanceUpdate): InstanceRecord {
  const next = { ...r, ...u };
  if (next.transport === "vpc" || u.vpcBinding !== undefined) return next;
  const { vpcBinding: _dropped, ...rest } = next;
  return rest;
}

export function toInstanceInfo(r: InstanceRecord): InstanceInfo {
  return { id: r.id, gpu: r.gpu, cost: r.cost, capacityFactor: r.capacityFactor, maxTokens: r.kvTokens };
}
