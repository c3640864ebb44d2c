/**
 * The ablation of issue 11 (docs/benchmarks.md, "Against the physical limits"): every policy against the limits of
 * its scenario, on several pools and workloads. `--help` lists the options. Jobs run in `--jobs` child processes
 * (the simulator is single-threaded); the report goes to bench/results/ablation-latest.{json,md}.
 */
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { getPolicy, POLICY_NAMES, type PolicySpec } from "../src/core/policies";
import { AblationOptionsSchema, LimitsSchema, ablatePolicy, measureLimits, type AblationOptions, type Limits, type PolicyAblation } from "../src/sim/ablation";
import { ablationMarkdown, ablationSummary, type AblationReport } from "./lib/ablation-report";
import { POOLS, SOURCES, checkPool, checkSource, scenarioOf } from "./lib/ablation-scenarios";
import { UsageError, listArg, numberArg, runCli } from "./lib/cli";
import { progressBars } from "./lib/progress";

const BASELINES = ["rr-fcfs", "least-loaded", "edf", "hexgen"];

const HELP = `usage: npm run bench:ablation -- [options]
  --pools LIST      ${Object.entries(POOLS).map(([k, v]) => `${k} (${v})`).join(", ")} (default all)
  --sources LIST    ${SOURCES.join(", ")} (default all; traces need ../shared/data)
  --policies LIST   ${POLICY_NAMES.join(" | ")} (default ${BASELINES.join(",")} and every ablation entry)
  --seeds N         evaluation seeds 1..N (default 5); α is tuned on seeds 101, 102
  --scales LIST     SLO scales for capacity (default 1.5,2,3,5)
  --loads LIST      load points as fractions of saturation (default 0.5,0.8)
  --workflows N     workflows per load-point run (default 300)
  --jobs N          child processes (default 2)
  --oracle          clairvoyant releases (true output lengths and remaining work; src/sim/oracle.ts): measurement, not a policy
  --admission       also capacity with workflow admission on: refused counted as misses, and accepted only
  --quick           reference pool, chess-trace1 and synthetic, 3 seeds, scale 2 only: a smoke run
  --out DIR         default bench/results`;

const JobSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("limits"), pool: z.string(), source: z.string(), policies: z.array(z.string()), opts: AblationOptionsSchema }),
  z.object({ kind: z.literal("policy"), pool: z.string(), source: z.string(), policy: z.string(), limits: LimitsSchema, opts: AblationOptionsSchema }),
]);
type Job = z.infer<typeof JobSchema>;

function policyOf(name: string): Readonly<PolicySpec> {
  const p = getPolicy(name);
  if (p === undefined) throw new UsageError(`unknown policy "${name}" (known: ${POLICY_NAMES.join(", ")})`);
  return p;
}

/** A child: runs the jobs its parent sends, one at a time, and answers each with its result. */
function worker(): void {
  process.on("message", (raw: unknown) => {
    const job = JobSchema.parse(raw);
    const s = { ...scenarioOf(job.pool, job.source), ...(job.opts.oracle ? { oracle: true } : {}) };
    const result = job.kind === "limits" ? measureLimits(s, job.policies.map(policyOf), job.opts.seeds, 0.5 * (s.instances.length / 4), 300, job.opts.scales) : ablatePolicy(s, policyOf(job.policy), job.limits, job.opts);
    process.send?.({ ok: true, result });
  });
}

async function runJobs<T>(jobs: readonly Job[], n: number, onDone: (job: Job, result: T) => void): Promise<void> {
  const queue = [...jobs];
  const self = fileURLToPath(import.meta.url);
  await Promise.all(
    Array.from({ length: Math.min(n, queue.length) }, async () => {
      const child = fork(self, ["--worker"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
      try {
        for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
          const current = job;
          const result = await new Promise<T>((resolve, reject) => {
            child.once("message", (m: unknown) => resolve((m as { result: T }).result));
            child.once("exit", (code) => reject(new Error(`ablation worker exited with ${code} during ${current.kind} ${current.pool}/${current.source}`)));
            child.send(current);
          });
          child.removeAllListeners("exit");
          onDone(current, result);
        }
      } finally {
        child.kill();
      }
    }),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pools: { type: "string" }, sources: { type: "string" }, policies: { type: "string" }, seeds: { type: "string" }, scales: { type: "string" },
      loads: { type: "string" }, workflows: { type: "string" }, jobs: { type: "string" }, quick: { type: "boolean", default: false }, admission: { type: "boolean", default: false }, oracle: { type: "boolean", default: false }, out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false }, worker: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.worker) return worker();
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const quick = values.quick;
  const pools = values.pools === undefined ? (quick ? ["reference"] : Object.keys(POOLS)) : listArg("pools", values.pools);
  pools.forEach(checkPool);
  const sources = values.sources === undefined ? (quick ? ["chess-trace1", "synthetic"] : [...SOURCES]) : listArg("sources", values.sources);
  sources.forEach(checkSource);
  // hexflow is left out by default: today it is hexgen's configuration (src/core/policies.ts).
  const defaultPolicies = [...BASELINES, ...POLICY_NAMES.filter((n) => getPolicy(n)?.description.startsWith("ablation:") === true)];
  const policies = values.policies === undefined ? defaultPolicies : listArg("policies", values.policies);
  policies.forEach(policyOf);
  for (const s of sources) scenarioOf(pools[0] ?? "reference", s);
  const seedCount = numberArg("seeds", values.seeds, quick ? 3 : 5, (n) => Number.isInteger(n) && n >= 1);
  const num = (name: string) => (x: string) => numberArg(name, x, 0);
  const opts: AblationOptions = {
    seeds: Array.from({ length: seedCount }, (_, i) => i + 1),
    tuneSeeds: [101, 102],
    workflows: numberArg("workflows", values.workflows, 300, (n) => Number.isInteger(n) && n >= 20),
    loads: values.loads === undefined ? [0.5, 0.8] : listArg("loads", values.loads).map(num("loads")),
    scales: values.scales === undefined ? (quick ? [2] : [1.5, 2, 3, 5]) : listArg("scales", values.scales).map(num("scales")),
    loadSloScale: 2,
    capacityHorizonSlos: 8,
    alphaStep: 0.1,
    admission: values.admission,
    oracle: values.oracle,
  };
  const jobsN = numberArg("jobs", values.jobs, 2, (n) => Number.isInteger(n) && n >= 1 && n <= 16);
  const started = Date.now();
  const cells = pools.flatMap((pool) => sources.map((source) => ({ pool, source })));
  const progress = progressBars();
  const limitsBar = progress.steps("limits", cells.length);
  const limits = new Map<string, Limits>();
  await runJobs<Limits>(cells.map((c) => ({ kind: "limits", ...c, policies, opts })), jobsN, (job, r) => {
    limits.set(`${job.pool}/${job.source}`, r);
    limitsBar.step(`${job.pool}/${job.source}`);
  });
  limitsBar.done("limits measured");
  const policyBar = progress.steps("policies", cells.length * policies.length);
  const results = new Map<string, PolicyAblation[]>();
  const limitsOf = (key: string): Limits => {
    const l = limits.get(key);
    if (l === undefined) throw new Error(`no limits for ${key}`);
    return l;
  };
  const policyJobs: Job[] = cells.flatMap((c) => policies.map((policy): Job => ({ kind: "policy", ...c, policy, limits: limitsOf(`${c.pool}/${c.source}`), opts })));
  await runJobs<PolicyAblation>(policyJobs, jobsN, (job, r) => {
    const key = `${job.pool}/${job.source}`;
    results.set(key, [...(results.get(key) ?? []), r]);
    policyBar.step(`${key} ${r.policy}`);
  });
  policyBar.done("policies measured");
  progress.stop();
  const report: AblationReport = {
    generatedAt: new Date().toISOString(),
    minutes: (Date.now() - started) / 60_000,
    options: opts,
    pools: Object.fromEntries(pools.map((p) => [p, POOLS[p] ?? p])),
    scenarios: cells.map((c) => {
      const key = `${c.pool}/${c.source}`;
      const lim = limitsOf(key);
      const order = new Map(policies.map((p, i) => [p, i]));
      return { ...c, limits: lim, policies: (results.get(key) ?? []).sort((a, b) => (order.get(a.policy) ?? 0) - (order.get(b.policy) ?? 0)) };
    }),
  };
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, "ablation-latest.json"), `${JSON.stringify(report, null, 1)}\n`);
  const mdPath = join(values.out, "ablation-latest.md");
  writeFileSync(mdPath, ablationMarkdown(report));
  process.stdout.write(ablationSummary(report, mdPath));
}

runCli(main);
