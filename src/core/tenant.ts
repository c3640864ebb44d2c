/**
 * A tenant's service terms: its SLO class, its quotas and what happens to its work under overload.
 *
 * Why here: the gateway enforces them, the tenant's Durable Object counts against them and the simulator
 * models SLO classes; one schema keeps the three in step. SLOs are scales of a base SLO (DESIGN section 5:
 * the no-queueing critical path on the pool's average GPU), so one class means the same on any pool.
 */
import { z } from "zod";

export const TenantNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "a tenant name is 1-63 characters: lowercase letters, digits and '-', not starting with '-'");

export const TenantIdSchema = z.string().regex(/^tn_[0-9a-f]{16}$/);

/**
 * Wide on purpose: an OpenAI-style call's base SLO is its own no-queueing time (a fraction of a second), so
 * an absolute deadline of a minute is hundreds of times it; the looseness a tenant may ask is its operator's call.
 */
const Scale = z.number().min(0.5).max(100_000);

export const TenantSloSchema = z
  .strictObject({
    /** The scale a request gets when it names no SLO. */
    defaultScale: Scale.default(5),
    /** The tightest scale a request may ask for: the tenant's SLO class. */
    minScale: Scale.default(1),
    /** The loosest: a looser SLO would only hide overload from the tenant's own figures. */
    maxScale: Scale.default(20),
  })
  .refine((s) => s.minScale <= s.defaultScale && s.defaultScale <= s.maxScale, "needs minScale <= defaultScale <= maxScale");

export const TenantQuotaSchema = z.strictObject({
  /** Sustained workflow starts per second (a token bucket; OpenAI-style calls are one-call workflows). */
  workflowsPerS: z.number().positive().max(10_000).default(10),
  /** Starts allowed at once above the sustained rate. */
  burst: z.number().int().min(1).max(100_000).default(20),
  /** Workflows running at once. */
  maxConcurrent: z.number().int().min(1).max(100_000).default(100),
});

export const TenantConfigSchema = z.strictObject({
  slo: TenantSloSchema.default({ defaultScale: 5, minScale: 1, maxScale: 20 }),
  quota: TenantQuotaSchema.default({ workflowsPerS: 10, burst: 20, maxConcurrent: 100 }),
  /**
   * When the pool predicts a workflow would miss its deadline: "reject" answers 503 with Retry-After;
   * "best-effort" runs it anyway behind the work that can still meet its deadline.
   */
  overload: z.enum(["reject", "best-effort"]).default("reject"),
});
export type TenantConfig = z.infer<typeof TenantConfigSchema>;
export type TenantQuota = z.infer<typeof TenantQuotaSchema>;

/** A partial update: each section replaces the stored one, validated whole. */
export const TenantConfigUpdateSchema = z.strictObject({
  slo: TenantSloSchema.optional(),
  quota: TenantQuotaSchema.optional(),
  overload: z.enum(["reject", "best-effort"]).optional(),
});

/** What a request may ask of its SLO: an absolute deadline or a scale, not both. */
export interface SloAsk {
  sloS?: number | undefined;
  scale?: number | undefined;
}

export type SloResolution = { ok: true; sloS: number; scale: number } | { ok: false; message: string };

const round = (x: number) => Math.round(x * 100) / 100;

/**
 * The request's SLO within its tenant's class. `baseS` is the base SLO of what is asked (the CHESS
 * template for a workflow, the call itself for a single completion).
 */
export function resolveSlo(slo: z.infer<typeof TenantSloSchema>, ask: SloAsk, baseS: number): SloResolution {
  if (ask.sloS !== undefined && ask.scale !== undefined) return { ok: false, message: "give sloMs or sloScale, not both" };
  const scale = ask.scale ?? (ask.sloS !== undefined ? ask.sloS / baseS : slo.defaultScale);
  const sloS = ask.sloS ?? scale * baseS;
  // A hair of tolerance: a client that computed sloMs from the published base SLO should not fail on rounding.
  const eps = 1e-6;
  if (scale < slo.minScale - eps) {
    return { ok: false, message: `the SLO ${round(sloS)} s is ${round(scale)}x the base SLO (${round(baseS)} s); your tenant's tightest is ${slo.minScale}x (${round(slo.minScale * baseS)} s)` };
  }
  if (scale > slo.maxScale + eps) {
    return { ok: false, message: `the SLO ${round(sloS)} s is ${round(scale)}x the base SLO (${round(baseS)} s); your tenant's loosest is ${slo.maxScale}x (${round(slo.maxScale * baseS)} s)` };
  }
  return { ok: true, sloS, scale };
}
