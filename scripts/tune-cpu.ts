/**
 * CPU time of one tuning decision (issue 6 acceptance): the tuner's decideAlpha over a window of
 * synthetic CHESS workflows on the reference pool, as the tuner Worker runs it. Run on one core:
 * `taskset -c 0 npx tsx scripts/tune-cpu.ts [--workflows 3600] [--rate 1] [--grid-step 0.05]`.
 */
import { parseArgs } from "node:util";
import { toRecord } from "../src/core/pool";
import { REFERENCE_POOL, buildInstances } from "../src/sim/cluster";
import { scenarioBaseSlo } from "../src/sim/scenario";
import { decideAlpha, DEFAULT_TUNING_CONFIG } from "../src/sim/tuning-decision";
import { buildWorkload } from "../src/sim/workload";
import { numberArg, runCli } from "./lib/cli";

runCli(() => {
  const { values } = parseArgs({ options: { workflows: { type: "string" }, rate: { type: "string" }, "grid-step": { type: "string" } } });
  const n = numberArg("--workflows", values.workflows, 3600, (x) => Number.isInteger(x) && x > 0);
  const rate = numberArg("--rate", values.rate, 1);
  const step = numberArg("--grid-step", values["grid-step"], 0.05, (x) => x > 0 && x <= 1);
  const grid = Array.from({ length: Math.floor(1 / step + 1e-9) + 1 }, (_, i) => Math.min(1, Math.round(i * step * 1e4) / 1e4));
  const instances = REFERENCE_POOL.map((gpu, i) => toRecord({ id: `${gpu.toLowerCase()}-${i}`, url: "http://127.0.0.1:9", gpu, model: "llama-3.1-70b", timeScale: 1, capacityFactor: 1, requestTimeoutMs: 600_000 }, 0));
  const sloS = 5 * scenarioBaseSlo({ instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: n, rate, sloScale: 5 });
  const window = buildWorkload({ kind: "synthetic" }, n, rate, 1).map((w) => ({ ...w, sloS }));
  const config = { ...DEFAULT_TUNING_CONFIG, alphaGrid: grid, maxWorkflows: Math.max(n, DEFAULT_TUNING_CONFIG.maxWorkflows) };
  // A cron invocation starts cold: no JIT warm-up, so this is what one tuning costs the tuner Worker.
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const d = decideAlpha({ window, instances, policy: "hexgen", alpha: 0.7, config });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `tuning: ${n} workflows at ${rate}/s, ${d.curve.length} alphas: cpu ${cpuMs.toFixed(0)} ms, wall ${wallMs.toFixed(0)} ms; best alpha ${d.bestAlpha} (p95 ${d.bestP95.toFixed(1)} s vs ${d.currentP95.toFixed(1)} s at 0.7, gain ${(d.gain * 100).toFixed(1)}%)\n`,
  );
});
