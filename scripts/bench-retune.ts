/**
 * The closed-loop tuning experiment (issue 6): on the local stack, the traffic changes mid-run (the
 * arrival rate is multiplied from one workflow on) while the tuner runs on its cron (every 5 pool
 * minutes) and on the degradation trigger; the same run with α pinned is the control. Reports the
 * P95 before and after the change, and every tuning decision. Writes bench/results/retune-latest.{json,md}.
 * `npm run bench:retune -- --help` lists the options.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { percentile } from "../src/core/stats";
import { REFERENCE_POOL, buildInstances } from "../src/sim/cluster";
import { scenarioBaseSlo } from "../src/sim/scenario";
import { adminFetch } from "./lib/admin-client";
import { UsageError, listArg, numberArg, runCli } from "./lib/cli";
import { errorCounts } from "./lib/e2e-report";
import { runLoadgen } from "./lib/loadgen-process";
import type { LoadgenWorkflow } from "./lib/loadgen-events";
import { progressBars } from "./lib/progress";
import { startStack } from "./lib/stack";

const HELP = `usage: npm run bench:retune -- [options]
  --rate R          arrivals per pool-clock second before the change (default 0.25)
  --factor F        the rate is multiplied by F at the change (default 2)
  --phase-s S       pool-clock seconds of traffic before the change, and after it (default 1200: four
                    cron runs each, the window of 1,800 s covering both sides of the change)
  --alpha LIST      α each pair of runs starts from (default 0.7,0.3)
  --seed LIST       default 1,2
  --time-scale X    pool seconds per wall second (default 10)
  --out DIR         default bench/results`;

const DecisionSchema = z.object({
  atMs: z.number(),
  reason: z.string(),
  currentAlpha: z.number(),
  bestAlpha: z.number().nullable(),
  gain: z.number().nullable(),
  installed: z.boolean(),
  workflows: z.number(),
  skipped: z.string().nullable(),
  cpuMs: z.number().nullable(),
});
type Decision = z.infer<typeof DecisionSchema>;

interface Run {
  seed: number;
  startAlpha: number;
  mode: "closed-loop" | "fixed";
  p95Before: number;
  p95After: number;
  /** Arrivals after the run's first α change (closed loop), and the same workflows in its fixed twin. */
  p95AfterRetune: number | null;
  attainmentAfter: number;
  succeeded: number;
  failed: number;
  /** Why the others did not succeed (rejected at submission, failed, unfinished), counted. */
  errors: Record<string, number>;
  finalAlpha: number;
  triggers: number;
  decisions: (Decision & { atWorkflow: number })[];
  /** Each emulated server's calibration at the end: the emulators follow the GPU profiles, so ≈ 1 is right. */
  calibration: { id: string; samples: number; decodeRatio: number; overheadRatio: number | null }[];
}

const PoolSchema = z.object({
  alpha: z.number(),
  instances: z.array(z.object({ id: z.string(), cost: z.object({ overheadS: z.number() }), calibration: z.object({ samples: z.number(), decodeRatio: z.number(), cost: z.object({ overheadS: z.number() }) }) })),
});

const p95 = (ws: readonly LoadgenWorkflow[]): number => percentile(ws.flatMap((w) => (w.status === "succeeded" && w.latencyMs !== null ? [w.latencyMs / 1000] : [])), 0.95);
const fmt = (x: number | null): string => (x === null || !Number.isFinite(x) ? "–" : x.toFixed(0));

runCli(async () => {
  const { values } = parseArgs({
    options: {
      rate: { type: "string" },
      factor: { type: "string" },
      "phase-s": { type: "string" },
      alpha: { type: "string", default: "0.7,0.3" },
      seed: { type: "string", default: "1,2" },
      "time-scale": { type: "string" },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const rate = numberArg("rate", values.rate, 0.25);
  const factor = numberArg("factor", values.factor, 2);
  const phaseS = numberArg("phase-s", values["phase-s"], 1200);
  const changeAt = Math.round(rate * phaseS);
  const n = changeAt + Math.round(rate * factor * phaseS);
  if (changeAt < 1 || n > 4000) throw new UsageError(`${changeAt} workflows before the change and ${n} in all: keep the total within 1..4000`);
  const scale = numberArg("time-scale", values["time-scale"], 10, (x) => x > 0 && x <= 100);
  const alphas = listArg("alpha", values.alpha).map((a) => numberArg("alpha", a, 0, (x) => x >= 0 && x <= 1));
  const seeds = listArg("seed", values.seed).map((s) => numberArg("seed", s, 0, (x) => Number.isInteger(x) && x >= 0));
  const sloScale = 5;
  const baseSloS = scenarioBaseSlo({ instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: n, rate, sloScale });
  // The deployed cadence and window in pool time: a cron every 300 s over the last 1,800 s.
  const tuneEveryS = 300 / scale;
  const tuningConfig = JSON.stringify({ windowS: 1800 / scale });

  const bars = progressBars();
  const runs: Run[] = [];
  const t0 = performance.now();
  try {
    for (const startAlpha of alphas) {
      for (const seed of seeds) {
        const pair: Run[] = [];
        for (const mode of ["closed-loop", "fixed"] as const) {
          const stack = await startStack({ fleet: [...REFERENCE_POOL], timeScale: scale, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-retune-")), quiet: true, tuneEveryS, tuningConfig, admission: "off" });
          try {
            const admin = (path: string, init?: RequestInit) => adminFetch(stack.url, stack.adminToken, path, init);
            const set = await admin("/pools/default/policy", { method: "PUT", body: JSON.stringify({ policy: "hexgen", alpha: startAlpha, pinned: mode === "fixed" }) });
            if (!set.ok) throw new Error(`setting the policy failed: ${set.status} ${await set.text()}`);
            const bar = bars.run(`α0 ${startAlpha} seed ${seed} ${mode}`, n);
            const out = await runLoadgen(
              { url: stack.url, apiKey: stack.apiKey, trace: "synthetic", rate, workflows: n, seed, timeScale: scale, sloMs: sloScale * baseSloS * 1000, timeoutS: Math.min(3600, (40 * n) / rate / scale), pollMs: 2000, rateChange: { atIndex: changeAt, factor } },
              (e) => {
                if (e.type === "submitted" || e.type === "rejected") bar.submitted();
                if (e.type === "ended") bar.ended();
              },
            );
            const history = z.object({ decisions: z.array(DecisionSchema) }).parse(await (await admin("/pools/default/tuning?limit=500")).json());
            const pool = PoolSchema.parse(await (await admin("/pools/default")).json());
            const created = out.workflows.map((w) => w.createdAtMs ?? Infinity);
            const decisions = history.decisions
              .sort((a, b) => a.atMs - b.atMs)
              .map((d) => ({ ...d, atWorkflow: created.filter((c) => c <= d.atMs).length }));
            const firstChange = decisions.find((d) => d.installed)?.atWorkflow ?? null;
            const after = out.workflows.slice(changeAt);
            const run: Run = {
              seed,
              startAlpha,
              mode,
              p95Before: p95(out.workflows.slice(0, changeAt)),
              p95After: p95(after),
              p95AfterRetune: null,
              attainmentAfter: after.filter((w) => w.status === "succeeded" && w.latencyMs !== null && w.sloMs !== null && w.latencyMs <= w.sloMs).length / after.length,
              succeeded: out.workflows.filter((w) => w.status === "succeeded").length,
              failed: out.workflows.filter((w) => w.status !== "succeeded").length,
              errors: errorCounts(out.workflows),
              finalAlpha: pool.alpha,
              triggers: decisions.filter((d) => d.reason === "degradation").length,
              decisions,
              calibration: pool.instances.map((i) => ({ id: i.id, samples: i.calibration.samples, decodeRatio: i.calibration.decodeRatio, overheadRatio: i.cost.overheadS > 0 ? i.calibration.cost.overheadS / i.cost.overheadS : null })),
            };
            // The closed loop's first install splits both runs of the pair at the same workflow.
            if (mode === "fixed") {
              const split = pair[0]?.decisions.find((d) => d.installed)?.atWorkflow;
              if (split !== undefined) run.p95AfterRetune = p95(out.workflows.slice(split));
            } else if (firstChange !== null) {
              run.p95AfterRetune = p95(out.workflows.slice(firstChange));
            }
            bar.done(`${run.succeeded}/${n} succeeded, P95 ${fmt(run.p95Before)} -> ${fmt(run.p95After)} s, α ${startAlpha} -> ${run.finalAlpha}`);
            pair.push(run);
          } finally {
            await stack.stop();
          }
        }
        runs.push(...pair);
      }
    }
  } finally {
    bars.stop();
  }
  const minutes = (performance.now() - t0) / 60_000;
  const cmd = `npm run bench:retune -- ${process.argv.slice(2).join(" ")}`.trim();
  const md = report(runs, { cmd, minutes, n, changeAt, rate, factor, scale });
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, "retune-latest.json"), `${JSON.stringify({ generatedAt: new Date().toISOString(), command: cmd, rate, factor, workflows: n, changeAt, timeScale: scale, runs }, null, 1)}\n`);
  writeFileSync(join(values.out, "retune-latest.md"), `${md}\n`);
  process.stdout.write(`${md}\n\nwrote ${values.out}/retune-latest.{json,md} in ${minutes.toFixed(1)} min\n`);
});

function report(runs: readonly Run[], o: { cmd: string; minutes: number; n: number; changeAt: number; rate: number; factor: number; scale: number }): string {
  const rows = runs.map((r) => {
    const timeline = r.decisions
      .map((d) => `wf ${d.atWorkflow} ${d.reason}: ${d.skipped !== null ? `skipped (${d.skipped})` : `best ${d.bestAlpha?.toFixed(2)} gain ${((d.gain ?? 0) * 100).toFixed(1)}%${d.installed ? " **installed**" : " kept"}`}`)
      .join("; ");
    return `| ${r.startAlpha} | ${r.seed} | ${r.mode} | ${fmt(r.p95Before)} | ${fmt(r.p95After)} | ${fmt(r.p95AfterRetune)} | ${(r.attainmentAfter * 100).toFixed(0)}% | ${r.succeeded}/${r.succeeded + r.failed} | ${r.finalAlpha} | ${r.triggers} | ${timeline} |`;
  });
  return [
    "# Closed-loop tuning under a traffic change",
    "",
    `Generated by \`${o.cmd}\` in ${o.minutes.toFixed(1)} min on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}. ` +
      `Reference pool (A100, A100, A6000, L40S) of emulated vLLM servers at time scale ${o.scale}; ${o.n} synthetic workflows per run, ` +
      `${o.rate} wf/s then ×${o.factor} from workflow ${o.changeAt}; hexgen, SLO 5x base. The tuner's cron runs every 300 pool-seconds ` +
      "over the last 1,800; the degradation trigger may ask sooner. `fixed` is the same run with α pinned. P95 in pool-clock seconds: " +
      "before = workflows arriving before the change, after = from the change on, after retune = from the closed loop's first install on (same workflows in both runs of a pair).",
    "",
    "| α at start | seed | mode | P95 before | P95 after | P95 after retune | SLO met after | succeeded | α at end | triggers | decisions (at the workflow count when taken) |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    ...runs.flatMap((r) => Object.entries(r.errors).map(([why, k]) => `- α at start ${r.startAlpha}, seed ${r.seed}, ${r.mode}: ${k} × ${why}`)),
    "",
    "Cost calibration at the end of each run (calibrated over profile; the emulated servers follow their GPU profiles, so 1.00 is right):",
    "",
    "| α at start | seed | mode | " + (runs[0]?.calibration.map((c) => c.id).join(" | ") ?? "") + " |",
    "|---|---|---|" + (runs[0]?.calibration.map(() => "---").join("|") ?? "") + "|",
    ...runs.map((r) => `| ${r.startAlpha} | ${r.seed} | ${r.mode} | ${r.calibration.map((c) => `decode ${c.decodeRatio.toFixed(2)}, overhead ${c.overheadRatio === null ? "–" : c.overheadRatio.toFixed(2)} (${c.samples} calls)`).join(" | ")} |`),
  ].join("\n");
}
