/**
 * The service frontier: what a pool's engines allow any scheduler, from the operating curves of frontier.ts, as a
 * least mean stretch and a least P95 at a given rate and a highest capacity at a given SLO. A model estimate, not a
 * theorem. It keeps the cost of batching and drops queueing, bursts of arrivals and the wait for a stage's
 * dependencies, which only add latency, and it knows every workflow's critical path in advance. Its other
 * assumptions, stated beside every figure:
 *
 * - a call served at an operating point takes that point's stretch for its class (its time in the engine over its
 *   floor, averaged over the class);
 * - a workflow that meets its deadline has every stage stretched alike, so a call may take the workflow's stretch
 *   times its stage's slowest call over itself (a short call beside a long one has room);
 * - the 5% of workflows given up are those with the longest critical paths, and they may go anywhere.
 *
 * The question is then a linear programme (yalps): each GPU type shares its instances' time among its operating
 * points; a point serves each call class up to its share of the point's work rate; work whose calls may take
 * stretch s only goes to points where its class's stretch is at most s.
 */
import { solve, type Coefficients } from "yalps";
import type { OperatingPoint } from "./frontier";

/** A workflow as the bound sees it: each stage's calls, with their floor seconds (limits.ts) and class. */
export interface WorkflowWork {
  stages: readonly (readonly { floorS: number; cls: number }[])[];
}

/** The instances of one GPU type and every operating point measured on it (whole mix and single classes alike). */
export interface Supply {
  count: number;
  points: readonly OperatingPoint[];
}

/** Floor seconds per workflow of one call class that may take at most `limit` stretch. */
export interface Demand {
  cls: number;
  limit: number;
  work: number;
}

export function criticalSeconds(w: WorkflowWork): number {
  return w.stages.reduce((s, st) => s + Math.max(0, ...st.map((c) => c.floorS)), 0);
}

export function workSeconds(w: WorkflowWork): number {
  return w.stages.reduce((s, st) => s + st.reduce((a, c) => a + c.floorS, 0), 0);
}

/**
 * The work per workflow, by class and the stretch it may take, when all but `1 - quantile` of the workflows meet
 * `deadlineS` (Infinity: no deadline). Null when more than that share cannot meet it even at their floor.
 */
export function stretchDemand(ws: readonly WorkflowWork[], deadlineS: number, quantile: number): Demand[] | null {
  const byPath = [...ws].sort((a, b) => criticalSeconds(a) - criticalSeconds(b));
  const kept = Math.ceil(quantile * ws.length);
  const demand: Demand[] = [];
  for (const [i, w] of byPath.entries()) {
    const path = criticalSeconds(w);
    if (i < kept && path > deadlineS) return null;
    const stretch = i < kept ? deadlineS / path : Infinity;
    for (const stage of w.stages) {
      const longest = Math.max(0, ...stage.map((c) => c.floorS));
      for (const c of stage) demand.push({ cls: c.cls, limit: stretch === Infinity ? Infinity : (stretch * longest) / c.floorS, work: c.floorS / ws.length });
    }
  }
  return demand;
}

export interface ServingPlan {
  /** The largest multiple of the demand served (workflows per second when the demand is per workflow). */
  multiple: number;
  /** Instances' worth of time each type spends at each point, at the optimum. */
  time: { type: number; concurrency: number; pure: number | null; instances: number }[];
}

/** What point `p` of type `t` supplies to class `cls` per instance-second, and at what stretch. */
function offers(supply: readonly Supply[]): { t: number; p: number; cls: number; rate: number; stretch: number }[] {
  return supply.flatMap((s, t) =>
    s.points.flatMap((pt, p) => pt.classShare.flatMap((share, cls) => {
      const stretch = pt.classStretch[cls] ?? Number.NaN;
      return share > 0 && Number.isFinite(stretch) ? [{ t, p, cls, rate: pt.workRate * share, stretch }] : [];
    })),
  );
}

function timeOf(supply: readonly Supply[], variables: readonly (readonly [string, number])[]): ServingPlan["time"] {
  return variables.flatMap(([name, value]) => {
    const m = /^tau(\d+):(\d+)$/.exec(name);
    const point = supply[Number(m?.[1])]?.points[Number(m?.[2])];
    if (m === null || point === undefined) return [];
    const pure = point.classShare.findIndex((x) => x > 0.999);
    return [{ type: Number(m[1]), concurrency: point.concurrency, pure: pure < 0 ? null : pure, instances: value }];
  });
}

/**
 * The largest multiple of `demand` the pool serves. Work that may take stretch s can use every point where its
 * class's stretch is at most s, so the sets of usable points are nested, and (Hall) the demand can be served iff,
 * for each class and each stretch level, the points at or below that level supply at least the demand limited to
 * it. That keeps the programme to one variable per operating point.
 */
export function servingPlan(supply: readonly Supply[], demand: readonly Demand[]): ServingPlan {
  const offered = offers(supply);
  const constraints: [string, { max?: number; min?: number }][] = supply.map((s, t) => [`time${t}`, { max: s.count }]);
  const theta: Record<string, number> = { theta: 1 };
  const rows = new Map<string, { cls: number; level: number }>();
  for (const cls of new Set(demand.map((d) => d.cls))) {
    const levels = [...new Set(offered.filter((o) => o.cls === cls).map((o) => o.stretch))].sort((a, b) => a - b);
    const mine = demand.filter((d) => d.cls === cls && d.work > 0);
    // Work no point serves (none of its class, or none within its stretch) cannot be served at any rate.
    if (mine.length > 0 && (levels.length === 0 || mine.some((d) => d.limit < (levels[0] ?? Infinity) - 1e-12))) return { multiple: 0, time: [] };
    for (const [j, level] of levels.entries()) {
      // The work that can use no level above this one: all of it at the top level.
      const above = levels[j + 1];
      const need = mine.filter((d) => above === undefined || d.limit < above - 1e-12).reduce((s, d) => s + d.work, 0);
      if (need <= 0) continue;
      const key = `h${cls}:${level}`;
      rows.set(key, { cls, level });
      constraints.push([key, { min: 0 }]);
      theta[key] = -need;
    }
  }
  const variables: [string, Coefficients][] = [["theta", theta]];
  for (const [t, s] of supply.entries()) {
    for (const p of s.points.keys()) {
      const tau: Record<string, number> = { [`time${t}`]: 1 };
      for (const o of offered) if (o.t === t && o.p === p) for (const [key, r] of rows) if (r.cls === o.cls && o.stretch <= r.level + 1e-12) tau[key] = o.rate;
      variables.push([`tau${t}:${p}`, tau]);
    }
  }
  const result = solve({ direction: "maximize", objective: "theta", constraints, variables });
  if (result.status !== "optimal") return { multiple: result.status === "unbounded" ? Infinity : 0, time: [] };
  return { multiple: result.result, time: timeOf(supply, result.variables) };
}

/**
 * The least work-weighted stretch at which the pool serves `rate` workflows per second with no deadline:
 * its in-engine seconds over floor seconds (Infinity past saturation). `classWork`: floor seconds per workflow.
 */
export function leastMeanStretch(supply: readonly Supply[], classWork: readonly number[], rate: number): number {
  const constraints: [string, { max?: number; min?: number }][] = [
    ...supply.map((s, t): [string, { max: number }] => [`time${t}`, { max: s.count }]),
    ...classWork.map((w, cls): [string, { min: number }] => [`d${cls}`, { min: rate * w }]),
  ];
  const variables: [string, Coefficients][] = [];
  for (const o of offers(supply)) {
    const cap = `cap${o.t}:${o.p}:${o.cls}`;
    constraints.push([cap, { max: 0 }]);
    variables.push([`x${o.t}:${o.p}:${o.cls}`, { [cap]: 1, [`d${o.cls}`]: 1, cost: o.stretch }]);
  }
  for (const [t, s] of supply.entries()) {
    for (const [p, pt] of s.points.entries()) {
      const tau: Record<string, number> = { [`time${t}`]: 1 };
      for (const [cls, share] of pt.classShare.entries()) if (share > 0) tau[`cap${t}:${p}:${cls}`] = -pt.workRate * share;
      variables.push([`tau${t}:${p}`, tau]);
    }
  }
  const result = solve({ direction: "minimize", objective: "cost", constraints, variables });
  const total = classWork.reduce((a, b) => a + b, 0);
  return result.status === "optimal" ? result.result / (rate * total) : Infinity;
}

/** The least P95 (seconds) at `rate` workflows per second; Infinity when the pool cannot carry the rate. */
export function p95Bound(ws: readonly WorkflowWork[], supply: readonly Supply[], rate: number, quantile = 0.95): number {
  const paths = ws.map(criticalSeconds).sort((a, b) => a - b);
  const ok = (x: number): boolean => {
    const demand = stretchDemand(ws, x, quantile);
    return demand !== null && servingPlan(supply, demand).multiple >= rate;
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
