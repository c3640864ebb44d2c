import type { PolicySpec } from "../core/policies";
import { baseSloSeconds } from "../core/slo";
import type { SimInstance } from "./cluster";
import { runMetrics, type RunMetrics } from "./metrics";
import { runSimulation, type EngineKind, type SimOutput } from "./simulator";
import type { SimAdmissionOptions } from "./sim-admission";
import { buildWorkload, withSloMix, type SloClass, type WorkloadSource } from "./workload";

/** Everything that defines one simulated experiment except the policy's α. */
export interface Scenario {
  instances: readonly SimInstance[];
  engine: EngineKind;
  source: WorkloadSource;
  workflows: number;
  rate: number;
  sloScale: number;
  /** Tenants with their own SLO scales (shares of the workflows); absent, every workflow has sloScale. */
  sloMix?: readonly SloClass[];
  /** Workflow admission at arrival; absent, every workflow runs. */
  admission?: SimAdmissionOptions;
  /** Measurement only: clairvoyant releases (sim/oracle.ts). */
  oracle?: boolean;
  /** Measurement only: where each workflow's time went (sim/breakdown.ts). */
  breakdown?: boolean;
}

export interface ScenarioRun {
  output: SimOutput;
  metrics: RunMetrics;
  baseSloS: number;
  sloS: number;
}

/** The base SLO is a property of the pool, the same for every policy and engine. */
export function scenarioBaseSlo(s: Scenario): number {
  return baseSloSeconds(s.instances);
}

export function runScenario(s: Scenario, policy: Readonly<PolicySpec>, alpha: number, seed: number): ScenarioRun {
  const baseSloS = scenarioBaseSlo(s);
  const sloS = s.sloScale * baseSloS;
  const built = buildWorkload(s.source, s.workflows, s.rate, seed);
  const workload = s.sloMix === undefined ? built : withSloMix(built, s.sloMix, baseSloS, seed);
  const output = runSimulation({ policy, alpha, instances: s.instances, engine: s.engine, workload, sloS, seed, ...(s.admission === undefined ? {} : { admission: s.admission }), ...(s.oracle === true ? { oracle: true } : {}), ...(s.breakdown === true ? { breakdown: true } : {}) });
  return { output, metrics: runMetrics(output.workflows, sloS), baseSloS, sloS };
}
