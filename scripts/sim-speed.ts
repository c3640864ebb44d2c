/**
 * Simulator speed (issue acceptance): a full α sweep (21 values) over 1,000 synthetic workflows at
 * 1 workflow/s on the reference pool, on one core. `npm run sim:speed`.
 */
import { getPolicy } from "../src/core/policies";
import { REFERENCE_POOL, buildInstances } from "../src/sim/cluster";
import { runScenario, type Scenario } from "../src/sim/scenario";

const policy = getPolicy("hexgen");
if (policy === undefined) throw new Error("hexgen policy missing from the registry");
const scenario: Scenario = { instances: buildInstances([...REFERENCE_POOL]), engine: "vllm", source: { kind: "synthetic" }, workflows: 1000, rate: 1, sloScale: 5 };
runScenario({ ...scenario, workflows: 100 }, policy, 0.5, 99); // warm the JIT as a long-running tuner would be
const t0 = performance.now();
let calls = 0;
for (let i = 0; i <= 20; i++) calls += runScenario(scenario, policy, i / 20, 1).output.calls;
const ms = performance.now() - t0;
process.stdout.write(`alpha sweep: 21 runs x 1000 workflows in ${(ms / 1000).toFixed(2)} s, ${Math.round(calls / (ms / 1000))} simulated LLM calls/s\n`);
