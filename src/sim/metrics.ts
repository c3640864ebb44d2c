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

/** Admission under load: who was turned away, and how the admitted fared against their own SLOs. */
export interface AdmissionMetrics {
  offered: number;
  accepted: number;
  bestEffort: number;
  rejected: number;
  /** Share of the (guaranteed) accepted workflows within their own SLO. */
  acceptedAttainment: number;
  /** Share of best-effort workflows within their original SLO. */
  bestEffortAttainment: number;
  /** Accepted workflows on time per second, first arrival to the last accepted completion. */
  goodput: number;
  acceptedP95: number;
}

export function admissionMetrics(results: readonly WorkflowResult[], rejected: number, fallbackSloS: number): AdmissionMetrics {
  const accepted = results.filter((r) => r.bestEffort !== true);
  const bestEffort = results.filter((r) => r.bestEffort === true);
  const onTime = (r: WorkflowResult): boolean => r.latencyS <= (r.sloS ?? fallbackSloS) + 1e-9;
  const share = (rs: readonly WorkflowResult[]): number => (rs.length === 0 ? Number.NaN : rs.filter(onTime).length / rs.length);
  let first = Infinity;
  let last = -Infinity;
  for (const r of results) first = Math.min(first, r.arrivalS);
  for (const r of accepted) last = Math.max(last, r.finishS);
  const good = accepted.filter(onTime).length;
  return {
    offered: results.length + rejected,
    accepted: accepted.length,
    bestEffort: bestEffort.length,
    rejected,
    acceptedAttainment: share(accepted),
    bestEffortAttainment: share(bestEffort),
    goodput: last > first ? good / (last - first) : Number.NaN,
    acceptedP95: latencySummary(accepted.map((r) => r.latencyS)).p95,
  };
}

/** Latency and attainment per SLO class (workflows grouped by their own SLO). */
export function perSloClass(results: readonly WorkflowResult[], fallbackSloS: number): { sloS: number; count: number; latency: LatencySummary; attainment: number }[] {
  const groups = new Map<number, WorkflowResult[]>();
  for (const r of results) {
    const k = r.sloS ?? fallbackSloS;
    const g = groups.get(k) ?? [];
    g.push(r);
    groups.set(k, g);
  }
  return [...groups.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([sloS, rs]) => ({ sloS, count: rs.length, latency: latencySummary(rs.map((r) => r.latencyS)), attainment: attainment(rs, sloS) }));
}
