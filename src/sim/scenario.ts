import type { PolicySpec } from "../core/policies";
import { baseSloSeconds } from "../core/slo";
import type { SimInstance } from "./cluster";
import { runMetrics, type RunMetrics } from "./metrics";
import { runSimulation, type EngineKind, type SimOutput } from "./simulator";
import { buildWorkload, type WorkloadSource } from "./workload";

/** Everything that defines one simulated experiment except the policy's α. */
export interface Scenario {
  instances: readonly SimInstance[];
  engine: EngineKind;
  source: WorkloadSource;
  workflows: number;
  rate: number;
  sloScale: number;
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
  const workload = buildWorkload(s.source, s.workflows, s.rate, seed);
  const output = runSimulation({ policy, alpha, instances: s.instances, engine: s.engine, workload, sloS, seed });
  return { output, metrics: runMetrics(output.workflows, sloS), baseSloS, sloS };
}
