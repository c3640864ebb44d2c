import { join } from "node:path";
import { buildInstances, parseCluster } from "../src/sim/cluster";
import { latencyFloor } from "../src/sim/limits";
import { buildWorkload } from "../src/sim/workload";
import { runScenario, type Scenario } from "../src/sim/scenario";
import { getPolicy } from "../src/core/policies";
import { loadTraceSource } from "./lib/cli";
const g = parseCluster(process.argv[2] ?? "A100,A100,A6000,L40S"); if (!g.ok) throw 0;
const inst = buildInstances(g.value);
const src = process.argv[3] ?? "chess-trace3";
const s0 = loadTraceSource(src === "synthetic" ? "synthetic" : join("/work/shared/data/traces", `${src}.json`));
const rate = Number(process.argv[4] ?? 0.03);
const scale = Number(process.argv[6] ?? 2);
const s: Scenario = { instances: inst, engine: "vllm", source: s0, workflows: 300, rate, sloScale: scale };
for (const pname of (process.argv[5] ?? "hexgen,edf").split(",")) {
  for (const alpha of [0.3, 0.5, 0.7, 0.9, 1.0]) {
    let miss = 0, n = 0; const ratios: number[] = [];
    for (const seed of [1,2,3]) {
      const run = runScenario(s, getPolicy(pname)!, alpha, seed);
      const w = buildWorkload(s0, 300, rate, seed);
      const f = latencyFloor("vllm", inst, w);
      for (const r of run.output.workflows) { n++; const fl = f.perWorkflow.get(r.id) ?? 0; ratios.push(r.latencyS / fl); if (r.latencyS > run.sloS) miss++; }
    }
    ratios.sort((a,b)=>a-b);
    console.log(pname, alpha, `att ${(100-100*miss/n).toFixed(1)}%`, `lat/floor p50 ${ratios[Math.floor(n/2)].toFixed(2)} p95 ${ratios[Math.floor(n*0.95)].toFixed(2)}`);
    if (!getPolicy(pname)!.tunesAlpha) break;
  }
}
