/**
 * What the service frontier (frontier.ts) allows a scheduler at best: a P95 at a given load and a capacity at a
 * given SLO. A model estimate, not a theorem. It keeps the cost of batching and drops queueing and the wait for a
 * stage's dependencies, which only add latency. Its assumptions, stated beside every figure:
 *
 * - a call served at an operating point takes that point's mean stretch (its time in the engine over its floor);
 * - a workflow that meets its deadline has every stage stretched alike, so a call may take the workflow's stretch
 *   times its stage's slowest call over itself (a short call beside a long one has room);
 * - the 5% of workflows given up are those with the longest critical paths, and they may go anywhere.
 *
 * The question is then a linear programme: the GPUs of each type share their time among their operating points,
 * each point serves work whose calls may take its stretch, and every class of calls must be served at the
 * workload's rate. Its optimum, the largest multiple of the demand that can be served, is the capacity.
 */
import { solve, type Coefficients } from "yalps";
import type { OperatingPoint } from "./frontier";

/** A workflow as the bound sees it: each stage's calls, in floor seconds (limits.ts). */
export interface WorkflowWork {
  stages: readonly (readonly number[])[];
}

/** The instances of one GPU type and that type's operating points. */
export interface Supply {
  count: number;
  points: readonly OperatingPoint[];
}

export function criticalSeconds(w: WorkflowWork): number {
  return w.stages.reduce((s, st) => s + Math.max(0, ...st), 0);
}

/**
 * Floor seconds per workflow that must be served at each stretch level or better, when the workflows kept meet
 * `deadlineS`: key = the largest stretch the work may take (Infinity for the workflows given up). Null when more
 * than `1 - quantile` of them cannot meet it even at their floor.
 */
export function stretchDemand(ws: readonly WorkflowWork[], deadlineS: number, quantile: number): Map<number, number> | null {
  const byPath = [...ws].sort((a, b) => criticalSeconds(a) - criticalSeconds(b));
  const kept = Math.ceil(quantile * ws.length);
  const demand = new Map<number, number>();
  const add = (stretch: number, f: number): void => {
    demand.set(stretch, (demand.get(stretch) ?? 0) + f / ws.length);
  };
  for (const [i, w] of byPath.entries()) {
    const path = criticalSeconds(w);
    if (i < kept && path > deadlineS) return null;
    const stretch = i < kept ? deadlineS / path : Infinity;
    for (const stage of w.stages) {
      const longest = Math.max(0, ...stage);
      for (const f of stage) add(stretch === Infinity ? Infinity : (stretch * longest) / f, f);
    }
  }
  return demand;
}

/**
 * The largest multiple of `demand` (floor seconds per second, by the stretch it may take) the pool can serve:
 * ≥ 1 means it can. Work of stretch limit s may only go to points whose stretch is at most s.
 */
export function servableMultiple(supply: readonly Supply[], demand: ReadonlyMap<number, number>): number {
  return servingPlan(supply, demand).multiple;
}

export interface ServingPlan {
  multiple: number;
  /** Instances' worth of time each type spends at each concurrency, at the optimum. */
  time: { type: number; concurrency: number; instances: number }[];
}

/** servableMultiple, with how the optimum shares each type's time among its operating points. */
export function servingPlan(supply: readonly Supply[], demand: ReadonlyMap<number, number>): ServingPlan {
  const levels = [...new Set(supply.flatMap((s) => s.points.map((p) => p.stretch)))].sort((a, b) => a - b);
  // Demand grouped by the tightest point level it may use: limits between two levels are the same class.
  const classes = new Map<number, number>();
  for (const [limit, work] of demand) {
    if (work <= 0) continue;
    const usable = levels.filter((l) => l <= limit + 1e-12);
    const top = usable[usable.length - 1];
    if (top === undefined) return { multiple: 0, time: [] };
    classes.set(top, (classes.get(top) ?? 0) + work);
  }
  const variables: [string, Coefficients][] = [["theta", { theta: 1, ...Object.fromEntries([...classes].map(([k, work]) => [`d${k}`, -work])) }]];
  const constraints: [string, { max?: number; equal?: number }][] = [...classes.keys()].map((k) => [`d${k}`, { equal: 0 }]);
  for (const [g, s] of supply.entries()) {
    constraints.push([`time${g}`, { max: s.count }]);
    for (const [p, pt] of s.points.entries()) {
      const cap = `cap${g}:${p}`;
      constraints.push([cap, { max: 0 }]);
      variables.push([`tau${g}:${p}`, { [`time${g}`]: 1, [cap]: -pt.workRate }]);
      for (const k of classes.keys()) if (pt.stretch <= k + 1e-12) variables.push([`x${k}@${g}:${p}`, { [cap]: 1, [`d${k}`]: 1 }]);
    }
  }
  const result = solve({ direction: "maximize", objective: "theta", constraints, variables });
  if (result.status !== "optimal") return { multiple: result.status === "unbounded" ? Infinity : 0, time: [] };
  const time = result.variables.flatMap(([name, value]) => {
    const m = /^tau(\d+):(\d+)$/.exec(name);
    const type = Number(m?.[1]);
    const point = supply[type]?.points[Number(m?.[2])];
    return m === null || point === undefined ? [] : [{ type, concurrency: point.concurrency, instances: value }];
  });
  return { multiple: result.result, time };
}

/** The least P95 (seconds) at `rate` workflows per second; Infinity when the pool cannot carry the rate. */
export function p95Bound(ws: readonly WorkflowWork[], supply: readonly Supply[], rate: number, quantile = 0.95): number {
  const paths = ws.map(criticalSeconds).sort((a, b) => a - b);
  const ok = (x: number): boolean => {
    const demand = stretchDemand(ws, x, quantile);
    return demand !== null && servableMultiple(supply, demand) >= rate;
  };
  let lo = paths[Math.ceil(quantile * ws.length) - 1] ?? 0;
  if (ok(lo)) return lo;
  let hi = lo * 2;
  for (let i = 0; !ok(hi); i++) {
    if (i >= 8) return Infinity;
    lo = hi;
    hi *= 2;
  }
  for (let i = 0; i < 30 && hi - lo > 1e-3 * lo; i++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
