/**
 * The end-to-end benchmark: every policy on the running system (gateway, Durable Objects, emulated
 * vLLM fleet), driven by a separate load-generator process, and the simulator on the very same
 * workload (same trace, seed, pool, α and SLO) for comparison. Writes bench/results/e2e-latest.{json,md}.
 * `npm run bench:e2e -- --help` lists the options.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { getPolicy, POLICY_NAMES } from "../src/core/policies";
import { percentile } from "../src/core/stats";
import type { GpuType } from "../src/core/gpu";
import { REFERENCE_POOL, buildInstances, parseCluster } from "../src/sim/cluster";
import { runScenario, scenarioBaseSlo, type Scenario } from "../src/sim/scenario";
import { UsageError, listArg, loadTraceSource, localOrigin, numberArg, runCli } from "./lib/cli";
import { e2eConsoleTable, errorCounts, measureE2e, measureSim, rateTables, summarize, type E2eRun } from "./lib/e2e-report";
import { runLoadgen } from "./lib/loadgen-process";
import { progressBars } from "./lib/progress";
import { attachStack, policySetter, type Target } from "./lib/attach";
import { startStack } from "./lib/stack";
import { apiKeyFor } from "./lib/credentials";

const HELP = `usage: npm run bench:e2e -- [options]
  --trace PATH|synthetic  workload (default synthetic)
  --rate LIST          Poisson arrivals per pool-clock second, e.g. 0.1,0.5 (default 0.1,0.5)
  --workflows N        per run (default 60)
  --time-scale X       pool seconds per wall second (default 10)
  --policy LIST        default rr-fcfs,least-loaded,edf,hexgen
  --seed LIST          default 1,2,3
  --alpha A            α of the wb policies, on the system and in the simulator (default 0.7, the pool default)
  --slo-scale K        workflows carry K x base SLO (default 5)
  --cluster LIST       the emulated fleet (default A100,A100,A6000,L40S)
  --url URL            use a running stack (npm start) instead of starting one; its fleet and time
                       scale apply, and --admin-token (or HEXFLOW_ADMIN_TOKEN) is needed; the tenant key is
                       --api-key, HEXFLOW_API_KEY, or the one npm start saved
  --admission MODE     the pool's admission control: off (default: every policy serves every workflow) or enforce
  --pool NAME          the pool of that stack (default default)
  --out DIR            default bench/results`;

const SCALES = [3, 5, 8];

runCli(async () => {
  const { values } = parseArgs({
    options: {
      trace: { type: "string", default: "synthetic" },
      rate: { type: "string", default: "0.1,0.5" },
      workflows: { type: "string" },
      "time-scale": { type: "string" },
      policy: { type: "string", default: "rr-fcfs,least-loaded,edf,hexgen" },
      seed: { type: "string", default: "1,2,3" },
      alpha: { type: "string" },
      "slo-scale": { type: "string" },
      cluster: { type: "string" },
      url: { type: "string" },
      "admin-token": { type: "string" },
      "api-key": { type: "string" },
      admission: { type: "string", default: "off" },
      pool: { type: "string", default: "default" },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const rates = listArg("rate", values.rate).map((r) => numberArg("rate", r, 0));
  const seeds = listArg("seed", values.seed).map((s) => numberArg("seed", s, 0, (x) => Number.isInteger(x) && x >= 0));
  const policies = listArg("policy", values.policy).map((name) => {
    const p = getPolicy(name);
    if (p === undefined) throw new UsageError(`unknown policy "${name}" (known: ${POLICY_NAMES.join(", ")})`);
    return p;
  });
  const n = numberArg("workflows", values.workflows, 60, (x) => Number.isInteger(x) && x > 0 && x <= 2000);
  if (values.url !== undefined && (values.cluster !== undefined || values["time-scale"] !== undefined)) throw new UsageError("--cluster and --time-scale describe a stack this command starts; with --url the running stack's apply");
  const requestedScale = numberArg("time-scale", values["time-scale"], 10, (x) => x > 0 && x <= 1000);
  const alpha = numberArg("alpha", values.alpha, 0.7, (x) => x >= 0 && x <= 1);
  const sloScale = numberArg("slo-scale", values["slo-scale"], 5);
  const cluster = values.cluster === undefined ? { ok: true as const, value: [...REFERENCE_POOL] } : parseCluster(values.cluster);
  if (!cluster.ok) throw new UsageError(cluster.error);
  const source = loadTraceSource(values.trace);

  const admission = values.admission;
  if (admission !== "off" && admission !== "enforce") throw new UsageError(`--admission is "off" (the default: every policy serves every workflow) or "enforce"`);
  const bars = progressBars();
  bars.note(values.url === undefined ? "bench:e2e: starting a local stack (gateway + emulated servers)" : `bench:e2e: using the stack at ${values.url}`);
  const stack = values.url === undefined
    ? await ownStack(cluster.value, requestedScale, admission)
    : await attachStack(localOrigin(values.url), values["admin-token"] ?? process.env.HEXFLOW_ADMIN_TOKEN, apiKeyFor(localOrigin(values.url), values["api-key"]), values.pool, admission);
  const scale = stack.timeScale;
  const gpus = stack.gpus;
  const t0 = performance.now();
  const runs: E2eRun[] = [];
  try {
    const instances = buildInstances(gpus, "vllm");
    for (const rate of rates) {
      for (const seed of seeds) {
        for (const policy of policies) {
          const scenario: Scenario = { instances, engine: "vllm", source, workflows: n, rate, sloScale };
          const baseSloS = scenarioBaseSlo(scenario);
          const a = policy.tunesAlpha ? alpha : null;
          await stack.setPolicy(policy.name, a);
          const bar = bars.run(`rate ${rate} seed ${seed} ${policy.name}`, n);
          const late: number[] = [];
          // Bounded: the run may take at most 20x its arrival span (pool clock), and an hour.
          const timeoutS = Math.min(3600, Math.max(120, ((20 * n) / rate / scale)));
          const out = await runLoadgen({ url: stack.url, apiKey: stack.apiKey, trace: values.trace, rate, workflows: n, seed, timeScale: scale, sloMs: sloScale * baseSloS * 1000, timeoutS, pollMs: 2000 }, (e) => {
            if (e.type === "submitted") late.push(e.lateMs);
            if (e.type === "submitted" || e.type === "rejected") bar.submitted();
            // A refused workflow (admission enforce) is over too: the bar counts it so that it can fill.
            if (e.type === "ended" || e.type === "rejected") bar.ended();
          });
          const ok = out.workflows.filter((w) => w.status === "succeeded").length;
          bar.done(`${ok}/${n} succeeded in ${(out.wallMs / 1000).toFixed(0)} s`);
          const sim = runScenario(scenario, policy, a ?? 0, seed);
          runs.push({
            rate,
            seed,
            policy: policy.name,
            alpha: a,
            e2e: { ...measureE2e(out.workflows, scale, baseSloS, SCALES), wallMs: out.wallMs, lateP99Ms: percentile(late, 0.99), errors: errorCounts(out.workflows) },
            sim: measureSim(sim.output.workflows, n, baseSloS, SCALES),
          });
        }
      }
    }
  } finally {
    bars.stop();
    await stack.stop();
  }
  const minutes = (performance.now() - t0) / 60_000;
  const summary = summarize(runs, SCALES);
  const cmd = `npm run bench:e2e -- ${process.argv.slice(2).join(" ")}`.trim();
  const meta =
    `Generated by \`${cmd}\` in ${minutes.toFixed(1)} min on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}. ` +
    `Pool ${gpus.join(", ")} of emulated vLLM servers at time scale ${scale}; ${source.label} workload, ${n} workflows per run, ` +
    `seeds ${seeds.join(", ")}, SLO ${sloScale}x base; α ${alpha} for the wb policies. Times are pool-clock seconds. ` +
    "The simulator column runs the same workloads (same trace, seed, pool, α, SLO) through `runScenario`, as `npm run sim` does.";
  const md = [`# End-to-end benchmark\n\n${meta}\n`, ...summary.map((s) => rateTables(s, SCALES))].join("\n");
  mkdirSync(values.out, { recursive: true });
  const slim = runs.map((r) => ({ ...r, e2e: { ...r.e2e, latencies: undefined }, sim: { ...r.sim, latencies: undefined } }));
  writeFileSync(join(values.out, "e2e-latest.json"), `${JSON.stringify({ generatedAt: new Date().toISOString(), command: cmd, timeScale: scale, pool: gpus, runs: slim }, null, 1)}\n`);
  writeFileSync(join(values.out, "e2e-latest.md"), `${md}\n`);
  // The markdown (fidelity tables included) is in the file; the terminal gets the headline figures.
  process.stdout.write(e2eConsoleTable(summary, SCALES.includes(sloScale) ? sloScale : 5));
  process.stdout.write(`wrote ${values.out}/e2e-latest.{json,md} in ${minutes.toFixed(1)} min (the full tables, with the simulator fidelity, are in e2e-latest.md)\n`);
});

/** A stack of its own, in a fresh state folder, stopped at the end. */
async function ownStack(fleet: GpuType[], timeScale: number, admission: "enforce" | "off"): Promise<Target> {
  const s = await startStack({ fleet, timeScale, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-bench-e2e-")), quiet: process.env.HEXFLOW_E2E_LOGS === undefined, admission });
  return { url: s.url, adminToken: s.adminToken, apiKey: s.apiKey, pool: s.pool, gpus: fleet, timeScale, setPolicy: policySetter(s.url, s.adminToken, s.pool, admission), stop: s.stop };
}
