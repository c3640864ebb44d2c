import { z } from "zod";
import { defaultCapacity } from "../core/gpu";
import { getPolicy } from "../core/policies";
import type { InstanceRecord } from "../core/pool";
import { sortedPercentile } from "../core/stats";
import type { SimInstance } from "./cluster";
import { runSimulation, type WorkflowResult } from "./simulator";
import type { WindowWorkflow } from "./trace-window";

/** The α grid of the automatic search: 0, 0.05, ..., 1 (DESIGN section 2.1). */
export const DEFAULT_ALPHA_GRID: readonly number[] = Array.from({ length: 21 }, (_, i) => Math.round(i * 5) / 100);

/**
 * Every knob of automatic tuning, with its default; the tuner Worker parses its overrides through
 * this schema, so this is the one place the defaults live.
 */
export const TuningConfigSchema = z.object({
  alphaGrid: z.array(z.number().min(0).max(1)).min(1).default([...DEFAULT_ALPHA_GRID]),
  /** Relative P95 gain of the best α over the current one needed to install it (hysteresis). */
  threshold: z.number().min(0).default(0.05),
  /** Below this many workflows the window says too little about the traffic to act on. */
  minWorkflows: z.number().int().min(1).default(50),
  seeds: z.array(z.number().int()).min(1).default([1]),
  /** How far back the tuner reads, in seconds of recording time. */
  windowS: z.number().positive().default(1800),
  /** Cap on the workflows replayed, so one tuning stays inside a cron invocation's CPU budget. */
  maxWorkflows: z.number().int().min(1).default(5000),
});
export type TuningConfig = z.infer<typeof TuningConfigSchema>;
export const DEFAULT_TUNING_CONFIG: TuningConfig = TuningConfigSchema.parse({});

export const CurvePointSchema = z.object({ alpha: z.number(), p95S: z.number(), attainment: z.number() });
export type CurvePoint = z.infer<typeof CurvePointSchema>;

export interface TuningInput {
  window: readonly WindowWorkflow[];
  instances: readonly InstanceRecord[];
  policy: string;
  alpha: number;
  config: TuningConfig;
}

export interface TuningDecision {
  bestAlpha: number;
  currentP95: number;
  bestP95: number;
  gain: number;
  install: boolean;
  curve: CurvePoint[];
  /** Why nothing was simulated; absent when the curve was computed. */
  skipped?: string;
}

/** The simulator's view of a registered instance: its calibrated cost, its admission limits. */
export function simInstance(r: InstanceRecord): SimInstance {
  const cap = { ...defaultCapacity(r.gpu, r.model), kvTokens: r.kvTokens, maxSeqs: r.maxConcurrency };
  return {
    id: r.id,
    gpu: r.gpu,
    cost: r.cost,
    capacityFactor: r.capacityFactor,
    maxTokens: r.kvTokens,
    capacity: cap,
    admission: { maxConcurrency: r.maxConcurrency, kvTokens: r.kvTokens },
  };
}

const round4 = (a: number): number => Math.round(a * 1e4) / 1e4;

function skip(alpha: number, reason: string): TuningDecision {
  return { bestAlpha: alpha, currentP95: Number.NaN, bestP95: Number.NaN, gain: 0, install: false, curve: [], skipped: reason };
}

function point(alpha: number, results: readonly WorkflowResult[], sloOf: ReadonlyMap<string, number>): CurvePoint {
  const sorted = results.map((r) => r.latencyS).sort((a, b) => a - b);
  let met = 0;
  for (const r of results) if (r.latencyS <= (sloOf.get(r.id) ?? Infinity) + 1e-9) met += 1;
  return { alpha, p95S: sortedPercentile(sorted, 0.95), attainment: results.length > 0 ? met / results.length : Number.NaN };
}

/**
 * Replays the window (its observed arrivals, each workflow's own SLO) on the pool under every α of
 * the grid and the current α, on the production policy code, and says whether to switch. The current
 * α keeps its place unless another is better by more than the threshold (relative P95), so noise in
 * the simulated curve does not make α flap; ties keep the current α.
 */
export function decideAlpha(input: TuningInput): TuningDecision {
  const { window, config } = input;
  const current = round4(input.alpha);
  const policy = getPolicy(input.policy);
  if (policy === undefined) return skip(current, `unknown policy "${input.policy}"`);
  if (!policy.tunesAlpha) return skip(current, `policy "${input.policy}" does not use α`);
  const instances = input.instances.filter((r) => r.state === "active").map(simInstance);
  if (instances.length === 0) return skip(current, "the pool has no active instance");
  if (window.length < config.minWorkflows) return skip(current, `too few workflows (${window.length} < ${config.minWorkflows})`);
  const sloOf = new Map(window.map((w) => [w.id, w.sloS]));
  const alphas = [...new Set([...config.alphaGrid.map(round4), current])].sort((a, b) => a - b);
  const curve = alphas.map((alpha) => {
    const pooled: WorkflowResult[] = [];
    for (const seed of config.seeds) {
      // sloS is the fallback of items without their own; every window item has one.
      const out = runSimulation({ policy, alpha, instances, engine: "vllm", workload: window, sloS: 0, seed });
      pooled.push(...out.workflows);
    }
    return point(alpha, pooled, sloOf);
  });
  const now = curve.find((p) => p.alpha === current);
  if (now === undefined) throw new Error("decideAlpha: the current α is missing from its own curve");
  let best = now;
  for (const p of curve) if (p.p95S < best.p95S - 1e-9) best = p;
  const gain = now.p95S > 0 ? (now.p95S - best.p95S) / now.p95S : 0;
  return { bestAlpha: best.alpha, currentP95: now.p95S, bestP95: best.p95S, gain, install: gain > config.threshold && best.alpha !== current, curve };
}
