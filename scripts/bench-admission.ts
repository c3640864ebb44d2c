/**
 * Admission control under overload, end to end (issue 7): the local stack is offered K x the pool's
 * capacity (measured in the simulator on the same pool, trace and SLO), once with the pool's admission
 * control enforced and once with it off, and the simulator runs the same workloads with the same
 * predictor. Reports how many workflows were refused (503 overloaded), and how the accepted ones met their
 * SLO. Writes bench/results/admission-latest.{json,md}. `npm run bench:admission -- --help` lists the options.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { getPolicy } from "../src/core/policies";
import { percentile } from "../src/core/stats";
import { measureCapacity } from "../src/sim/capacity";
import { REFERENCE_POOL, buildInstances } from "../src/sim/cluster";
import { admissionMetrics } from "../src/sim/metrics";
import { runScenario, scenarioBaseSlo, type Scenario } from "../src/sim/scenario";
import { UsageError, listArg, numberArg, runCli } from "./lib/cli";
import { runLoadgen } from "./lib/loadgen-process";
import type { LoadgenWorkflow } from "./lib/loadgen-events";
import { progressBars } from "./lib/progress";
import { startStack } from "./lib/stack";

const HELP = `usage: npm run bench:admission -- [options]
  --rate-x K        offered load as a multiple of the pool's simulated capacity (default 3)
  --capacity C      that capacity in workflows per pool-clock second (default: measured in the simulator, ~15 s)
  --workflows N     per run (default 240)
  --seed LIST       default 1
  --mode LIST       enforce,off (default both, in that order)
  --slo-scale S     SLO as a multiple of the base SLO (default 5)
  --time-scale X    pool seconds per wall second (default 10)
  --out DIR         default bench/results
  --keep-workflows  also write every workflow of every run to the JSON (arrival, status, latency, SLO, refusal)`;

interface Figures {
  offered: number;
  accepted: number;
  refused: number;
  otherErrors: number;
  acceptedAttainment: number;
  acceptedP95S: number;
  goodput: number;
}

/** The accepted workflows against their own SLO; goodput over the span from the first arrival to the last accepted end (pool clock). */
function e2eFigures(ws: readonly LoadgenWorkflow[]): Figures {
  const accepted = ws.filter((w) => w.id !== null);
  const ended = accepted.filter((w) => w.latencyMs !== null && w.sloMs !== null);
  const onTime = ended.filter((w) => w.status === "succeeded" && (w.latencyMs ?? Infinity) <= (w.sloMs ?? 0));
  const first = Math.min(...ws.map((w) => w.arrivalS));
  const last = Math.max(...ended.map((w) => w.arrivalS + (w.latencyMs ?? 0) / 1000));
  return {
    offered: ws.length,
    accepted: accepted.length,
    refused: ws.filter((w) => w.rejectCode === "overloaded").length,
    otherErrors: ws.filter((w) => w.id === null && w.rejectCode !== "overloaded").length + accepted.filter((w) => w.status !== "succeeded").length,
    // Unfinished accepted workflows count as misses: they did not end within their SLO.
    acceptedAttainment: accepted.length === 0 ? Number.NaN : onTime.length / accepted.length,
    acceptedP95S: percentile(ended.map((w) => (w.latencyMs ?? 0) / 1000), 0.95),
    goodput: last > first ? onTime.length / (last - first) : Number.NaN,
  };
}

const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "–");
const row = (label: string, f: Figures) => `| ${label} | ${f.offered} | ${f.accepted} | ${f.refused} | ${f.otherErrors} | ${f2(f.acceptedAttainment)} | ${Number.isFinite(f.acceptedP95S) ? f.acceptedP95S.toFixed(0) : "–"} | ${f2(f.goodput)} |`;

runCli(async () => {
  const { values } = parseArgs({
    options: {
      "rate-x": { type: "string" },
      capacity: { type: "string" },
      workflows: { type: "string" },
      seed: { type: "string", default: "1" },
      mode: { type: "string", default: "enforce,off" },
      "slo-scale": { type: "string" },
      "time-scale": { type: "string" },
      out: { type: "string", default: "bench/results" },
      "keep-workflows": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const k = numberArg("rate-x", values["rate-x"], 3, (x) => x > 0 && x <= 20);
  const n = numberArg("workflows", values.workflows, 240, (x) => Number.isInteger(x) && x > 0 && x <= 3000);
  const seeds = listArg("seed", values.seed).map((s) => numberArg("seed", s, 0, (x) => Number.isInteger(x) && x >= 0));
  const modes = listArg("mode", values.mode).map((m) => {
    if (m !== "enforce" && m !== "off") throw new UsageError(`--mode: "${m}" is neither enforce nor off`);
    return m;
  });
  const sloScale = numberArg("slo-scale", values["slo-scale"], 5, (x) => x >= 0.5 && x <= 100);
  const scale = numberArg("time-scale", values["time-scale"], 10, (x) => x > 0 && x <= 100);
  const policy = getPolicy("hexgen");
  if (policy === undefined) throw new Error("hexgen missing from the policy registry");
  const alpha = 0.7;
  const base: Scenario = { instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: n, rate: 0.5, sloScale };
  const capacity = values.capacity !== undefined
    ? numberArg("capacity", values.capacity, 0.5, (x) => x > 0)
    : measureCapacity({ ...base, workflows: Math.max(n, 300) }, policy, { seeds: [1, 2, 3], alpha }).capacity;
  const rate = k * capacity;
  const baseSloS = scenarioBaseSlo(base);
  const scenario: Scenario = { ...base, rate };

  const bars = progressBars();
  const runs: { seed: number; mode: string; e2e: Figures; sim: Figures; workflows: LoadgenWorkflow[] }[] = [];
  const t0 = performance.now();
  try {
    for (const seed of seeds) {
      for (const mode of modes) {
        const stack = await startStack({ fleet: [...REFERENCE_POOL], timeScale: scale, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-admission-")), quiet: true, admission: mode });
        try {
          const bar = bars.run(`seed ${seed} admission ${mode}`, n);
          const out = await runLoadgen(
            { url: stack.url, apiKey: stack.apiKey, trace: "synthetic", rate, workflows: n, seed, timeScale: scale, sloMs: sloScale * baseSloS * 1000, timeoutS: Math.min(3600, (30 * n) / rate / scale), pollMs: 2000 },
            (e) => {
              if (e.type === "submitted" || e.type === "rejected") bar.submitted();
              if (e.type === "ended" || e.type === "rejected") bar.ended();
            },
          );
          const e2e = e2eFigures(out.workflows);
          bar.done(`${e2e.accepted} accepted, ${e2e.refused} refused, attainment ${f2(e2e.acceptedAttainment)}`);
          const simRun = runScenario(mode === "enforce" ? { ...scenario, admission: { config: {}, bestEffort: false } } : scenario, policy, alpha, seed);
          const m = admissionMetrics(simRun.output.workflows, simRun.output.rejected?.length ?? 0, simRun.sloS);
          const sim: Figures = { offered: m.offered, accepted: m.accepted, refused: m.rejected, otherErrors: 0, acceptedAttainment: m.acceptedAttainment, acceptedP95S: m.acceptedP95, goodput: m.goodput };
          runs.push({ seed, mode, e2e, sim, workflows: out.workflows });
        } finally {
          await stack.stop();
        }
      }
    }
  } finally {
    bars.stop();
  }
  const minutes = (performance.now() - t0) / 60_000;
  const cmd = `npm run bench:admission -- ${process.argv.slice(2).join(" ")}`.trim();
  const md = [
    "# Admission control under overload\n",
    `Generated by \`${cmd}\` in ${minutes.toFixed(1)} min on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}. ` +
      `Pool ${REFERENCE_POOL.join(", ")} of emulated vLLM servers at time scale ${scale}; synthetic CHESS workload, ${n} workflows per run, ` +
      `Poisson arrivals at ${rate.toFixed(3)} wf/s = ${k} x the simulated capacity ${capacity.toFixed(3)} wf/s (hexgen, α ${alpha}, SLO ${sloScale}x base = ${(sloScale * baseSloS).toFixed(0)} s). ` +
      "Times are pool-clock seconds. Attainment is over accepted workflows (one that did not end counts as a miss); goodput is accepted workflows on time per second.\n",
    "| run | offered | accepted | refused (503) | other errors | accepted attainment | accepted P95 (s) | goodput (wf/s) |",
    "|---|---|---|---|---|---|---|---|",
    ...runs.flatMap((r) => [row(`seed ${r.seed}, admission ${r.mode}, system`, r.e2e), row(`seed ${r.seed}, admission ${r.mode}, simulator`, r.sim)]),
  ].join("\n");
  mkdirSync(values.out, { recursive: true });
  // Every workflow of every run only with --keep-workflows (about 1 MB for 3 seeds of 480): the figures are the result.
  const kept = values["keep-workflows"] ? runs : runs.map(({ workflows: _, ...r }) => r);
  writeFileSync(join(values.out, "admission-latest.json"), `${JSON.stringify({ generatedAt: new Date().toISOString(), command: cmd, rate, capacity, rateX: k, timeScale: scale, sloScale, runs: kept }, null, 1)}\n`);
  writeFileSync(join(values.out, "admission-latest.md"), `${md}\n`);
  process.stdout.write(`${md}\n\nwrote ${values.out}/admission-latest.{json,md} in ${minutes.toFixed(1)} min\n`);
});
