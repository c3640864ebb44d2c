/**
 * Every family /metrics exposes, with its type and help, built from the persisted counters (D1) and the
 * pools' live state (one coordinator each). Pure: src/api/metrics.ts does the I/O. The names are stable
 * (README "Metrics").
 */
import { canonicalLabels, LATENCY_BUCKETS_S, LAXITY_BUCKETS_S, leLabel, METRIC, type Labels } from "./metric-increments";
import type { Family, Sample } from "./prometheus-text";

export interface StoredCounter {
  name: string;
  labels: Labels;
  value: number;
}

export const HEALTH_STATES = ["healthy", "probation", "unhealthy"] as const;

export interface InstanceSnapshot {
  id: string;
  gpu: string;
  queued: number;
  running: number;
  /** Outstanding estimated work, pool-clock seconds. */
  loadS: number;
  health: (typeof HEALTH_STATES)[number];
}

export type PoolSnapshot = { pool: string; up: true; alpha: number; alphaVersion: number; instances: readonly InstanceSnapshot[] } | { pool: string; up: false };

interface CounterDef {
  name: string;
  help: string;
}

const COUNTERS: readonly CounterDef[] = [
  { name: METRIC.workflowsEnded, help: "Workflows that ended, by status (succeeded, failed, cancelled); counted when the workflow's trace is written to D1." },
  { name: METRIC.workflowSlo, help: "SLO outcome of succeeded workflows (met: latency within the SLO); failed workflows are counted in hexflow_workflows_ended_total only." },
];

const HISTOGRAMS: readonly (CounterDef & { bounds: readonly number[] })[] = [
  {
    name: METRIC.workflowLatency,
    help: "End-to-end latency of succeeded workflows, arrival to end, in pool-clock seconds (emulated seconds on an emulated pool).",
    bounds: LATENCY_BUCKETS_S,
  },
  {
    name: METRIC.laxity,
    help: "Laxity of each call that finished without error, when its instance admitted it to vLLM (deadline - admission time - the instance's estimated service time), pool-clock seconds, negative when late; as the instance reported it for the call's last attempt, observed when the workflow's trace is written.",
    bounds: LAXITY_BUCKETS_S,
  },
];

const LATER_COUNTERS: readonly CounterDef[] = [
  { name: METRIC.dispatched, help: "Calls of ended workflows by the instance they were last bound to and its GPU type; counted from the call traces when the workflow's trace is written (re-dispatches of a retried call count once, on its last instance)." },
  { name: METRIC.tuningDecisions, help: "alpha tuning decisions by reason (cron, degradation, manual) and whether the coordinator installed the new alpha." },
];

const sortKey = (l: Labels): string => canonicalLabels(l);
const byLabels = (a: Sample, b: Sample): number => (sortKey(a.labels) < sortKey(b.labels) ? -1 : sortKey(a.labels) > sortKey(b.labels) ? 1 : 0);

function counterFamily(def: CounterDef, stored: readonly StoredCounter[]): Family {
  const samples = stored.filter((s) => s.name === def.name).map((s) => ({ name: s.name, labels: s.labels, value: s.value }));
  return { name: def.name, type: "counter", help: def.help, samples: samples.sort(byLabels) };
}

const withoutLe = (l: Labels): Labels => Object.fromEntries(Object.entries(l).filter(([k]) => k !== "le"));
const boundOf = (le: string): number => (le === "+Inf" ? Infinity : Number(le));

/**
 * Stored buckets are cumulative (metric-increments.ts); a bound with no row had no observation at or below it,
 * so it renders 0. Bounds found in storage but not in the definition are kept, so nothing stored is hidden.
 */
function histogramFamily(def: CounterDef & { bounds: readonly number[] }, stored: readonly StoredCounter[]): Family {
  const groups = new Map<string, { labels: Labels; buckets: Map<number, number>; sum: number; count: number }>();
  const group = (labels: Labels) => {
    const key = sortKey(labels);
    let g = groups.get(key);
    if (g === undefined) {
      g = { labels, buckets: new Map(), sum: 0, count: 0 };
      groups.set(key, g);
    }
    return g;
  };
  for (const s of stored) {
    if (s.name === `${def.name}_bucket`) {
      const le = s.labels.le;
      if (le !== undefined && !Number.isNaN(boundOf(le))) group(withoutLe(s.labels)).buckets.set(boundOf(le), s.value);
    } else if (s.name === `${def.name}_sum`) group(s.labels).sum = s.value;
    else if (s.name === `${def.name}_count`) group(s.labels).count = s.value;
  }
  const samples: Sample[] = [];
  for (const key of [...groups.keys()].sort()) {
    const g = groups.get(key);
    if (g === undefined) continue;
    const bounds = [...new Set([...def.bounds, ...g.buckets.keys(), Infinity])].sort((a, b) => a - b);
    for (const b of bounds) samples.push({ name: `${def.name}_bucket`, labels: { ...g.labels, le: leLabel(b) }, value: g.buckets.get(b) ?? 0 });
    samples.push({ name: `${def.name}_sum`, labels: g.labels, value: g.sum }, { name: `${def.name}_count`, labels: g.labels, value: g.count });
  }
  return { name: def.name, type: "histogram", help: def.help, samples };
}

function gauge(name: string, help: string, samples: Sample[]): Family {
  return { name, type: "gauge", help, samples };
}

function poolFamilies(pools: readonly PoolSnapshot[]): Family[] {
  const up = pools.flatMap((p) => (p.up ? [p] : []));
  const instances = up.flatMap((p) => p.instances.map((i) => ({ i, labels: { pool: p.pool, instance: i.id, gpu: i.gpu } })));
  const perInstance = (name: string, help: string, value: (i: InstanceSnapshot) => number): Family =>
    gauge(name, help, instances.map(({ i, labels }) => ({ name, labels, value: value(i) })));
  return [
    gauge("hexflow_pool_up", "1 when the pool's coordinator answered this scrape; 0 when it did not, and its live gauges are missing.", pools.map((p) => ({ name: "hexflow_pool_up", labels: { pool: p.pool }, value: p.up ? 1 : 0 }))),
    gauge("hexflow_pool_alpha", "The pool's current alpha, the dispatch score's weight of speed against load.", up.map((p) => ({ name: "hexflow_pool_alpha", labels: { pool: p.pool }, value: p.alpha }))),
    gauge("hexflow_pool_alpha_version", "The version of the pool's alpha, raised by every install.", up.map((p) => ({ name: "hexflow_pool_alpha_version", labels: { pool: p.pool }, value: p.alphaVersion }))),
    perInstance("hexflow_instance_queue_length", "Calls bound to the instance and waiting in its hexflow queue, as the coordinator tracks them.", (i) => i.queued),
    perInstance("hexflow_instance_running_calls", "Calls the instance has admitted to its vLLM server and not yet finished.", (i) => i.running),
    perInstance("hexflow_instance_outstanding_work_seconds", "Estimated work queued and running on the instance (remaining estimated service time), pool-clock seconds: the load L_m of the dispatch score.", (i) => i.loadS),
    gauge(
      "hexflow_instance_health",
      "The instance's dispatch health as a state set: 1 for its current state (healthy, probation, unhealthy), 0 for the others.",
      instances.flatMap(({ i, labels }) => HEALTH_STATES.map((state) => ({ name: "hexflow_instance_health", labels: { ...labels, state }, value: i.health === state ? 1 : 0 }))),
    ),
  ];
}

/** Every family, in a fixed order; a family without samples still has its HELP and TYPE. */
export function metricFamilies(stored: readonly StoredCounter[], pools: readonly PoolSnapshot[]): Family[] {
  return [
    ...COUNTERS.map((d) => counterFamily(d, stored)),
    ...HISTOGRAMS.map((d) => histogramFamily(d, stored)),
    ...LATER_COUNTERS.map((d) => counterFamily(d, stored)),
    ...poolFamilies(pools),
  ];
}
