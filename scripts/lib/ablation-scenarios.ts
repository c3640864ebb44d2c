/** The pools and workloads of issue 11's ablation, shared by bench:ablation and bench:frontier. */
import { join } from "node:path";
import { buildInstances, parseCluster } from "../../src/sim/cluster";
import type { Scenario } from "../../src/sim/scenario";
import { UsageError, loadTraceSource, sharedDataDir } from "./cli";

export const POOLS: Readonly<Record<string, string>> = { reference: "A100,A100,A6000,L40S", large: "A100x4,A6000x2,L40Sx2", h100: "H100,A100,L40Sx2" };
export const SOURCES = ["chess-trace1", "chess-trace2", "chess-trace3", "synthetic"] as const;

export function checkPool(p: string): void {
  if (!(p in POOLS) && !parseCluster(p).ok) throw new UsageError(`unknown pool "${p}" (known: ${Object.keys(POOLS).join(", ")}, or a GPU list)`);
}

export function checkSource(s: string): void {
  if (!(SOURCES as readonly string[]).includes(s)) throw new UsageError(`unknown source "${s}" (known: ${SOURCES.join(", ")})`);
}

export function scenarioOf(pool: string, source: string): Scenario {
  const gpus = parseCluster(POOLS[pool] ?? pool);
  if (!gpus.ok) throw new UsageError(gpus.error);
  const data = sharedDataDir();
  if (source !== "synthetic" && data === undefined) throw new UsageError(`${source} needs ../shared/data (or HEXFLOW_SHARED_DATA)`);
  const loaded = loadTraceSource(source === "synthetic" ? "synthetic" : join(data ?? "", "traces", `${source}.json`));
  return { instances: buildInstances(gpus.value), engine: "vllm", source: loaded, workflows: 300, rate: 0.5, sloScale: 2 };
}
