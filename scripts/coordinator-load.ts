/**
 * The coordinator's work per workflow, from the simulator (docs/scaling.md): a pool's coordinator takes one
 * releaseStage RPC per stage and makes one dispatch decision per call, so stages and calls per workflow turn
 * `npm run bench:dispatch`'s stage dispatches per second into workflows per second.
 *
 *   npm run sim:coordinator -- [--trace PATH|synthetic] [--workflows N] [--seed S]
 *
 * The simulation runs the production scheduling code on the reference pool at 0.5 workflows/s; its call
 * count checks the workload's (a stage the simulator never released would show as a difference).
 */
import { parseArgs } from "node:util";
import { getPolicy } from "../src/core/policies";
import { percentile } from "../src/core/stats";
import { REFERENCE_POOL, buildInstances } from "../src/sim/cluster";
import { runSimulation } from "../src/sim/simulator";
import { buildWorkload } from "../src/sim/workload";
import { loadTraceSource, numberArg, runCli } from "./lib/cli";

runCli(() => {
  const { values } = parseArgs({ options: { trace: { type: "string", default: "synthetic" }, workflows: { type: "string" }, seed: { type: "string" } }, strict: true });
  const source = loadTraceSource(values.trace);
  const n = numberArg("workflows", values.workflows, source.kind === "trace" ? source.entries.length : 500);
  const seed = numberArg("seed", values.seed, 1);
  const workload = buildWorkload(source, n, 0.5, seed);
  const stages = workload.map((w) => w.spec.stages.length);
  const calls = workload.map((w) => w.spec.stages.reduce((k, s) => k + s.calls.length, 0));
  const policy = getPolicy("hexgen");
  if (policy === undefined) throw new Error("no hexgen policy");
  const out = runSimulation({ policy, alpha: 0.5, instances: buildInstances(REFERENCE_POOL), engine: "vllm", workload, sloS: 1e9, seed });
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const row = (name: string, xs: number[]) => `| ${name} | ${mean(xs).toFixed(1)} | ${percentile(xs, 0.5)} | ${percentile(xs, 0.95)} | ${Math.max(...xs)} |`;
  process.stdout.write(
    [
      `${source.label}, ${n} workflows, seed ${seed}; simulated calls ${out.calls} (workload ${calls.reduce((a, b) => a + b, 0)}), ${out.workflows.length} finished`,
      "| per workflow | mean | P50 | P95 | max |",
      "|---|---|---|---|---|",
      row("stages (releaseStage RPCs)", stages),
      row("calls (dispatch decisions)", calls),
    ].join("\n") + "\n",
  );
});
