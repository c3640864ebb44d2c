/**
 * Where the time goes for a policy at one operating point (sim/breakdown.ts), pooled over seeds in steady state:
 * the shares of waiting, batching, placement and floor in the latency of every workflow and of the tail (those
 * that missed the SLO, or those at or above the P95). It says which lever a scheduler has left: a queue order
 * acts on waiting only, dispatch on placement, and batching is what throughput costs.
 */
import type { PolicySpec } from "../core/policies";
import { sortedPercentile } from "../core/stats";
import { steadyRuns } from "./capacity";
import type { Scenario } from "./scenario";
import type { WorkflowResult } from "./simulator";

export interface Shares {
  workflows: number;
  meanLatencyS: number;
  wait: number;
  batch: number;
  gpu: number;
  floor: number;
}

function shares(ws: readonly WorkflowResult[]): Shares {
  let latency = 0;
  const sum = { wait: 0, batch: 0, gpu: 0, floor: 0 };
  for (const w of ws) {
    latency += w.latencyS;
    sum.wait += w.breakdown?.waitS ?? 0;
    sum.batch += w.breakdown?.batchS ?? 0;
    sum.gpu += w.breakdown?.gpuS ?? 0;
    sum.floor += w.breakdown?.floorS ?? 0;
  }
  const of = (x: number): number => (latency > 0 ? x / latency : Number.NaN);
  return { workflows: ws.length, meanLatencyS: ws.length > 0 ? latency / ws.length : Number.NaN, wait: of(sum.wait), batch: of(sum.batch), gpu: of(sum.gpu), floor: of(sum.floor) };
}

export function breakdownAt(s: Scenario, policy: Readonly<PolicySpec>, alpha: number, seeds: readonly number[], tail: "missed" | "p95"): { all: Shares; tail: Shares } {
  const { perSeed, sloS } = steadyRuns({ ...s, breakdown: true }, policy, alpha, seeds, "miss");
  const all = perSeed.flat();
  const p95 = sortedPercentile(all.map((w) => w.latencyS).sort((a, b) => a - b), 0.95);
  const late = all.filter((w) => (tail === "missed" ? w.latencyS > sloS : w.latencyS >= p95));
  return { all: shares(all), tail: shares(late) };
}
