import { mean, sortedPercentile } from "../core/stats";
import type { WorkflowResult } from "./simulator";

export interface LatencySummary {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

export interface RunMetrics {
  latency: LatencySummary;
  /** Share of workflows within sloScale × base SLO. */
  attainment: number;
  /** Completed workflows per second, first arrival to last completion. */
  throughput: number;
}

export function latencySummary(latencies: readonly number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    mean: mean(sorted),
    p50: sortedPercentile(sorted, 0.5),
    p95: sortedPercentile(sorted, 0.95),
    p99: sortedPercentile(sorted, 0.99),
  };
}

export function attainment(results: readonly WorkflowResult[], sloS: number): number {
  if (results.length === 0) return Number.NaN;
  let met = 0;
  for (const r of results) if (r.latencyS <= sloS + 1e-9) met += 1;
  return met / results.length;
}

/** Attainment at each scale, from one run's latencies (used for the attainment-vs-scale curves). */
export function attainmentCurve(results: readonly WorkflowResult[], baseSloS: number, scales: readonly number[]): number[] {
  return scales.map((k) => attainment(results, k * baseSloS));
}

/**
 * Steady state for capacity: leaves out the workflows among the first and last `trim` share of
 * arrivals, where the pool is filling up or draining.
 */
export function steadyState(results: readonly WorkflowResult[], trim = 0.1): WorkflowResult[] {
  const byArrival = [...results].sort((a, b) => a.arrivalS - b.arrivalS);
  const cut = Math.floor(byArrival.length * trim);
  return byArrival.slice(cut, byArrival.length - cut);
}

export function runMetrics(results: readonly WorkflowResult[], sloS: number): RunMetrics {
  let first = Infinity;
  let last = -Infinity;
  for (const r of results) {
    first = Math.min(first, r.arrivalS);
    last = Math.max(last, r.finishS);
  }
  return {
    latency: latencySummary(results.map((r) => r.latencyS)),
    attainment: attainment(results, sloS),
    throughput: results.length > 0 && last > first ? results.length / (last - first) : Number.NaN,
  };
}
