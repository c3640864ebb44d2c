/**
 * The chaos harness (issue 8): the local stack under a seeded Poisson load while one of the four emulated
 * servers is dead half the time, the others hang, answer 500/503 or drop connections mid-stream in short
 * bursts, and the gateway Worker restarts once; then every submitted workflow is checked against the gateway
 * (succeeded or failed with a reason, none lost, none duplicated, no call executed beyond the retry bound)
 * and P95 is compared with the same workload without faults. Localhost only, bounded in time.
 * Writes bench/results/chaos-latest.{json,md}; exits 1 when the run fails its checks.
 * `npm run chaos -- --help` lists the options; docs/reliability.md explains the figures.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { numberArg, runCli } from "./lib/cli";
import { chaosConsoleTable, chaosMarkdown } from "./lib/chaos-report";
import { runChaos, type ChaosOptions, type ChaosRun } from "./lib/chaos-run";
import { progressBars } from "./lib/progress";

const HELP = `usage: npm run chaos -- [options]
  --seed S               workload and fault schedule (default 1)
  --duration-s D         emulated seconds of load (default 600: 60 s real at time scale 10)
  --rate R               workflows per emulated second (default 0.3, about half the fleet's capacity)
  --time-scale X         emulated seconds per real second (default 10)
  --cycles N             kill/restart cycles of the dead server (default 4)
  --request-timeout-s T  the instances' request timeout, emulated seconds (default 120)
  --timeout-s T          real seconds to wait after the last submission for every workflow to end (default 300)
  --no-baseline          skip the fault-free run of the same workload (the P95 comparison)
  --state-dir DIR        make the chaos run's state directory (Durable Objects, D1, call logs) in DIR and keep it
  --keep-state-dir       do not delete the state directory at the end
  --out DIR              default bench/results
  --json                 print the JSON report instead of the summary table (and no progress)
  --quiet                no progress or fault lines`;

runCli(async () => {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      "duration-s": { type: "string" },
      rate: { type: "string" },
      "time-scale": { type: "string" },
      cycles: { type: "string" },
      "request-timeout-s": { type: "string" },
      "timeout-s": { type: "string" },
      "no-baseline": { type: "boolean", default: false },
      "state-dir": { type: "string" },
      "keep-state-dir": { type: "boolean", default: false },
      out: { type: "string", default: "bench/results" },
      json: { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const base = {
    seed: numberArg("seed", values.seed, 1, (x) => Number.isInteger(x) && x >= 0),
    durationS: numberArg("duration-s", values["duration-s"], 600, (x) => x >= 10 && x <= 7200),
    rate: numberArg("rate", values.rate, 0.3, (x) => x > 0 && x <= 5),
    timeScale: numberArg("time-scale", values["time-scale"], 10, (x) => x >= 1 && x <= 100),
    cycles: numberArg("cycles", values.cycles, 4, (x) => Number.isInteger(x) && x >= 1 && x <= 50),
    requestTimeoutS: numberArg("request-timeout-s", values["request-timeout-s"], 120, (x) => x >= 1 && x <= 3600),
    timeoutS: numberArg("timeout-s", values["timeout-s"], 300, (x) => x > 0 && x <= 3600),
  };
  const bars = progressBars({ quiet: values.quiet || values.json });
  const run = async (label: string, o: Omit<ChaosOptions, "onSubmitted" | "onEnded" | "log" | "onPhase">): Promise<ChaosRun> => {
    const bar = bars.run(label, Math.ceil(o.rate * o.durationS));
    const r = await runChaos({ ...o, onSubmitted: () => bar.submitted(), onEnded: () => bar.ended(), onPhase: (p, workflows) => {
        bar.resize(workflows);
        bar.phase(p === "stack" ? "starting the stack" : p);
      }, log: (l) => bars.note(`${label}: ${l}`) });
    bar.done(`${r.figures.accepted} accepted, ${r.figures.succeeded} succeeded, ${r.figures.lost} lost, ${r.figures.duplicated} duplicated, P95 ${r.figures.p95S.toFixed(1)} s`);
    return r;
  };
  let chaos: ChaosRun;
  let baseline: ChaosRun | null = null;
  try {
    if (values["state-dir"] !== undefined) mkdirSync(values["state-dir"], { recursive: true });
    chaos = await run(`chaos seed ${base.seed}`, { ...base, faults: true, ...(values["state-dir"] === undefined ? {} : { stateDir: values["state-dir"] }), keepStateDir: values["keep-state-dir"] || values["state-dir"] !== undefined });
    if (!values["no-baseline"]) baseline = await run(`baseline seed ${base.seed}`, { ...base, faults: false });
  } finally {
    bars.stop();
  }
  const args = process.argv.slice(2);
  const command = args.length === 0 ? "npm run chaos" : `npm run chaos -- ${args.join(" ")}`;
  const md = chaosMarkdown(chaos, baseline, command);
  const p95Ratio = baseline === null ? null : chaos.figures.p95S / baseline.figures.p95S;
  const report = { generatedAt: new Date().toISOString(), command, verdict: chaos.verdict, p95Ratio, chaos, baseline };
  mkdirSync(values.out, { recursive: true });
  if (values["keep-state-dir"] || values["state-dir"] !== undefined) process.stderr.write(`kept the chaos run's state in ${chaos.stateDir}\n`);
  const json = `${JSON.stringify(report, (_, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v), 1)}\n`;
  writeFileSync(join(values.out, "chaos-latest.json"), json);
  writeFileSync(join(values.out, "chaos-latest.md"), md);
  // The markdown (fault events, lost and duplicated workflows by name) is in the file; the terminal gets the key figures.
  process.stdout.write(values.json ? json : `${chaosConsoleTable(chaos, baseline)}wrote ${values.out}/chaos-latest.{json,md} (the full report, with every fault event, is chaos-latest.md)\n`);
  if (!chaos.verdict.ok) process.exitCode = 1;
});
