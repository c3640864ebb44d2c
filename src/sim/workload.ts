import type { TraceEntry } from "../core/chess";
import { workflowFromTrace } from "../core/chess";
import { exponential, forkRng } from "../core/rng";
import type { WorkflowSpec } from "../core/workflow";
import { syntheticWorkflow } from "./synthetic";

export interface WorkloadItem {
  id: string;
  arrivalS: number;
  spec: WorkflowSpec;
  /** This workflow's own end-to-end SLO (a replayed trace records one per workflow); absent, the run's. */
  sloS?: number;
}

export type WorkloadSource = { kind: "synthetic" } | { kind: "trace"; entries: readonly TraceEntry[] };

/**
 * `n` workflows with Poisson arrivals at `rate` per second. A trace is replayed in order and cycled
 * when n exceeds it; the synthetic source draws fresh workflows. Arrivals and contents use separate
 * random streams, so the same seed gives the same workflows at any rate.
 */
export function buildWorkload(source: WorkloadSource, n: number, rate: number, seed: number): WorkloadItem[] {
  const arrivals = forkRng(seed, 1);
  const contents = forkRng(seed, 2);
  const items: WorkloadItem[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) t += exponential(arrivals, rate);
    const spec = source.kind === "synthetic" ? syntheticWorkflow(contents) : traceAt(source.entries, i);
    items.push({ id: `wf${i}`, arrivalS: t, spec });
  }
  return items;
}

function traceAt(entries: readonly TraceEntry[], i: number): WorkflowSpec {
  const e = entries[i % entries.length];
  if (e === undefined) throw new Error("buildWorkload: empty trace");
  return workflowFromTrace(e);
}

/**
 * The same workload with the arrival rate multiplied by `factor` from workflow `fromIndex` on: the
 * gaps after it shrink by the factor (Poisson gaps scale with 1/rate), the contents stay the same.
 * What a traffic change mid-run looks like, for the closed-loop tuning experiment.
 */
export function withRateChange(items: readonly WorkloadItem[], fromIndex: number, factor: number): WorkloadItem[] {
  const out: WorkloadItem[] = [];
  let t = 0;
  items.forEach((item, i) => {
    const prev = items[i - 1];
    if (prev !== undefined) t += (item.arrivalS - prev.arrivalS) / (i >= fromIndex ? factor : 1);
    out.push({ ...item, arrivalS: t });
  });
  return out;
}

/** One tenant class of a multi-tenant workload: its SLO scale and its share of the workflows. */
export interface SloClass {
  scale: number;
  share: number;
}

/**
 * The same workload with each workflow's own SLO (scale × base SLO) drawn from the classes by share,
 * on a random stream of its own, so the arrivals and contents are those of the single-class run.
 */
export function withSloMix(items: readonly WorkloadItem[], classes: readonly SloClass[], baseSloS: number, seed: number): WorkloadItem[] {
  const total = classes.reduce((sum, c) => sum + c.share, 0);
  if (classes.length === 0 || !(total > 0)) throw new Error("withSloMix: no class with a positive share");
  const rng = forkRng(seed, 4);
  return items.map((item) => {
    let u = rng.next() * total;
    const cls = classes.find((c) => (u -= c.share) < 0) ?? classes[classes.length - 1];
    return cls === undefined ? { ...item } : { ...item, sloS: cls.scale * baseSloS };
  });
}
