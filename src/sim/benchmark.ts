import { POLICIES, type PolicySpec } from "../core/policies";
import { measureCapacity } from "./capacity";
import { buildInstances } from "./cluster";
import { attainment, attainmentCurve, latencySummary, type LatencySummary } from "./metrics";
import { runScenario, scenarioBaseSlo, type Scenario } from "./scenario";
import type { EngineKind, WorkflowResult } from "./simulator";
import { tuneAlpha } from "./tuner";
import type { GpuType } from "../core/gpu";
import type { WorkloadSource } from "./workload";

export interface BenchConfig {
  pool: readonly GpuType[];
  engines: readonly EngineKind[];
  sources: readonly { label: string; source: WorkloadSource }[];
  rates: readonly number[];
  seeds: readonly number[];
  tuneSeeds: readonly number[];
  capacitySeeds: readonly number[];
  /** Capacity probes span this many SLOs of arrivals; α is re-tuned per probe on this grid step. */
  capacityHorizonSlos: number;
  capacityAlphaStep: number;
  workflows: number;
  /** The SLO scale the workflows carry (their deadlines); attainment is read at every scale. */
  sloScale: number;
  tableScales: readonly number[];
  curveScales: readonly number[];
  policies: readonly string[];
}

export interface PolicyResult {
  alpha: number | null;
  latency: LatencySummary;
  /** Attainment at each of tableScales, pooled over seeds. */
  attainment: Record<string, number>;
  curve: number[];
  throughput: number;
  capacity: number;
}

export interface ScenarioResult {
  engine: EngineKind;
  trace: string;
  rate: number;
  baseSloS: number;
  policies: Record<string, PolicyResult>;
}

export type Progress = (done: number, total: number, what: string) => void;

/**
 * The paper-style comparison: every policy on every (engine, trace, rate), α tuned per scenario on
 * seeds disjoint from the evaluation seeds (as a tuner only ever sees past traffic), latencies
 * pooled over the evaluation seeds. Capacity depends on the pool, trace and engine, not on the
 * rate, so it is measured once per (engine, trace).
 */
export function runBenchmark(cfg: BenchConfig, progress: Progress = () => {}): ScenarioResult[] {
  const specs = cfg.policies.map((name) => {
    const p = POLICIES[name];
    if (p === undefined) throw new Error(`benchmark: unknown policy ${name}`);
    return p;
  });
  const total = cfg.engines.length * cfg.sources.length * (cfg.rates.length + 1) * specs.length;
  let done = 0;
  const out: ScenarioResult[] = [];
  for (const engine of cfg.engines) {
    const instances = buildInstances(cfg.pool, engine);
    for (const { label, source } of cfg.sources) {
      const base: Scenario = { instances, engine, source, workflows: cfg.workflows, rate: cfg.rates[0] ?? 1, sloScale: cfg.sloScale };
      const capacities = new Map<string, number>();
      for (const p of specs) {
        capacities.set(
          p.name,
          measureCapacity(base, p, {
            seeds: cfg.capacitySeeds,
            alpha: p.tunesAlpha ? "auto" : 0,
            horizonSlos: cfg.capacityHorizonSlos,
            alphaGridStep: cfg.capacityAlphaStep,
          }).capacity,
        );
        progress(++done, total, `${engine} ${label} capacity ${p.name}`);
      }
      for (const rate of cfg.rates) {
        const s: Scenario = { ...base, rate };
        const policies: Record<string, PolicyResult> = {};
        for (const p of specs) {
          policies[p.name] = evaluate(s, p, cfg, capacities.get(p.name) ?? Number.NaN);
          progress(++done, total, `${engine} ${label} rate ${rate} ${p.name}`);
        }
        out.push({ engine, trace: label, rate, baseSloS: scenarioBaseSlo(s), policies });
      }
    }
  }
  return out;
}

function evaluate(s: Scenario, p: Readonly<PolicySpec>, cfg: BenchConfig, capacity: number): PolicyResult {
  const alpha = p.tunesAlpha ? tuneAlpha(s, p, { seeds: cfg.tuneSeeds }).alpha : null;
  const pooled: WorkflowResult[] = [];
  let throughput = 0;
  let baseSloS = 0;
  for (const seed of cfg.seeds) {
    const run = runScenario(s, p, alpha ?? 0, seed);
    pooled.push(...run.output.workflows);
    throughput += run.metrics.throughput / cfg.seeds.length;
    baseSloS = run.baseSloS;
  }
  const att: Record<string, number> = {};
  for (const k of cfg.tableScales) att[String(k)] = attainment(pooled, k * baseSloS);
  return {
    alpha,
    latency: latencySummary(pooled.map((r) => r.latencyS)),
    attainment: att,
    curve: attainmentCurve(pooled, baseSloS, cfg.curveScales),
    throughput,
    capacity,
  };
}
