/**
 * The service frontier of issue 11's scenarios (src/sim/frontier*.ts): what batching physically costs at a load,
 * as a least mean stretch, a least P95 and a highest capacity per SLO scale, beside what the ablation measured.
 * `--help` lists the options; the report goes to bench/results/frontier/frontier-latest.{json,md}.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { getPolicy } from "../src/core/policies";
import { breakdownAt, type Shares } from "../src/sim/breakdown-report";
import { scenarioBaseSlo, type Scenario } from "../src/sim/scenario";
import { scenarioFrontier, type FrontierOptions, type ScenarioFrontier } from "../src/sim/frontier-scenario";
import { POOLS, SOURCES, checkPool, checkSource, scenarioOf } from "./lib/ablation-scenarios";
import { UsageError, listArg, numberArg, runCli } from "./lib/cli";
import { progressBars } from "./lib/progress";
import { STRONG_BASELINES, bestOf } from "./lib/ablation-report";
import { fmt, markdownTable, renderTable } from "./lib/summary-table";

const HELP = `usage: npm run bench:frontier -- [options]
  --pools LIST      ${Object.entries(POOLS).map(([k, v]) => `${k} (${v})`).join(", ")} (default all)
  --sources LIST    ${SOURCES.join(", ")} (default all; traces need ../shared/data)
  --loads LIST      loads as fractions of the measured saturation (default 0.2,0.5,0.8)
  --scales LIST     SLO scales for capacity (default 1.5,2,3,5)
  --workflows N     workflows whose calls form the mix and whose paths form the demand (default 300)
  --seeds N         seeds for where the time goes, at the measured points (default 3; 0 skips)
  --ablation DIR    bench:ablation results to compare with, DIR/<pool>/ablation-latest.json (default bench/results/ablation)
  --out DIR         default bench/results/frontier`;

/** The part of an ablation report the comparison reads. */
const MeasuredSchema = z.object({
  scenarios: z.array(z.object({
    source: z.string(),
    limits: z.object({ saturation: z.number(), floorP95S: z.number() }),
    policies: z.array(z.object({
      policy: z.string(),
      loads: z.array(z.object({ load: z.number(), p95OverFloor: z.number(), alpha: z.number().nullable().optional() })),
      capacity: z.array(z.object({ scale: z.number(), capacity: z.number(), alpha: z.number().nullable().optional() })),
    })),
  })),
});
type Measured = z.infer<typeof MeasuredSchema>["scenarios"][number];

/** A load point by its share of saturation (loads are parsed numbers, so compared with a tolerance). */
const atLoad = <L extends { load: number }>(loads: readonly L[] | undefined, load: number): L | undefined => loads?.find((l) => Math.abs(l.load - load) < 1e-9);

function measuredOf(dir: string, pool: string, source: string): Measured | undefined {
  const path = join(dir, pool, "ablation-latest.json");
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new UsageError(`${path} is not JSON`);
  }
  const parsed = MeasuredSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`${path} is not a bench:ablation report`);
  return parsed.data.scenarios.find((s) => s.source === source);
}

/** The best measured capacity of edf, least-loaded and hexgen at `scale`, and whose it is. */
function bestBaseline(m: Measured | undefined, scale: number) {
  return bestOf(m?.policies ?? [], scale, (n) => STRONG_BASELINES.includes(n));
}

interface TimeSplit {
  at: string;
  policy: string;
  rate: number;
  all: Shares;
  tail: Shares;
}

/** Where the time goes for the best baseline at its measured capacity (2x SLO), and for hexgen at 80% load. */
function timeSplits(s: Scenario, m: Measured | undefined, seeds: readonly number[]): TimeSplit[] {
  if (m === undefined || seeds.length === 0) return [];
  const out: TimeSplit[] = [];
  const best = bestBaseline(m, 2);
  const spec = best === undefined ? undefined : getPolicy(best.policy);
  if (best !== undefined && spec !== undefined && best.capacity > 0) {
    out.push({ at: "cap@2x (missed)", policy: best.policy, rate: best.capacity, ...breakdownAt({ ...s, rate: best.capacity, sloScale: 2 }, spec, best.entry.alpha ?? 0, seeds, "missed") });
  }
  const hexgen = getPolicy("hexgen");
  const at80 = atLoad(m.policies.find((p) => p.policy === "hexgen")?.loads, 0.8);
  if (hexgen !== undefined && at80 !== undefined) {
    const rate = 0.8 * m.limits.saturation;
    out.push({ at: "80% load (≥ P95)", policy: "hexgen", rate, ...breakdownAt({ ...s, rate, sloScale: 2 }, hexgen, at80.alpha ?? 0, seeds, "p95") });
  }
  return out;
}

interface Row {
  pool: string;
  source: string;
  frontier: ScenarioFrontier;
  measured: Measured | undefined;
  splits: TimeSplit[];
}

function markdown(rows: readonly Row[], o: FrontierOptions, minutes: number): string {
  const head = [
    "pool / workload", "P95 floor s", "saturation wf/s: frontier (measured)",
    ...o.loads.map((l) => `@${fmt.percent(l)}: mean stretch ≥ / P95 ≥ × floor (hexgen measured)`),
    ...o.scales.map((k) => `cap@${k}x ≤ wf/s (best baseline measured)`),
  ];
  const body = rows.map(({ pool, source, frontier: f, measured: m }) => [
    `${pool} / ${source}`,
    fmt.fixed(f.floorP95S, 1),
    `${fmt.fixed(f.saturation, 3)} (${fmt.fixed(m?.limits.saturation, 3)})`,
    ...f.loads.map((l) => {
      const hex = atLoad(m?.policies.find((p) => p.policy === "hexgen")?.loads, l.load);
      return `${fmt.times(l.meanStretch)} / ${fmt.times(l.p95OverFloor)} (${fmt.times(hex?.p95OverFloor)})`;
    }),
    ...f.capacity.map((c) => {
      const b = bestBaseline(m, c.scale);
      return `${fmt.fixed(c.capacity, 3)} (${b === undefined ? "–" : `${b.policy} ${fmt.fixed(b.capacity, 3)}`})`;
    }),
  ]);
  return [
    "# The service frontier\n",
    `Generated by \`npm run bench:frontier\` in ${minutes.toFixed(1)} min; ${o.workflows} workflows (seed ${o.seed}) form the call mix and the demand; ${o.window} calls measured per operating point after as many of warm-up. Loads are shares of the saturation the ablation measured (of the frontier's own where no ablation result exists).\n`,
    "**A fluid model, not a theorem** (src/sim/frontier-bounds.ts): it keeps what batching costs and leaves out queueing, bursts of arrivals and the waits between dependent stages, which only add latency; it knows every workflow's critical path in advance. Each GPU may share its time among the whole call mix and each class alone (short or long context, split at 4,096 tokens), at concurrencies 1 to 256 (1,024 on H100). A workflow that meets its deadline has every stage stretched alike, and the 5% given up are the longest.\n",
    markdownTable(head, body),
    "\nHow the optimum at each SLO scale shares each GPU type's time among concurrencies (instances' worth):\n",
    markdownTable(["pool / workload", ...o.scales.map((k) => `@${k}x`)], rows.map(({ pool, source, frontier: f }) => [
      `${pool} / ${source}`,
      ...f.capacity.map((c) => c.time.filter((t) => t.instances > 0.01).map((t) => `${t.gpu} ${t.calls}@${t.concurrency}: ${t.instances.toFixed(2)}`).join(", ") || "–"),
    ])),
    "\nWhere the time goes at the measured points (src/sim/breakdown.ts; steady state, pooled over the seeds): each stage's last call splits into waiting for its engine, batching (its time in the engine beyond its time alone there), placement (alone there beyond alone on its fastest type) and its floor. Shares of the summed latency, for every workflow and for the tail.\n",
    markdownTable(["pool / workload", "point", "policy", "wf/s", "all: wait / batch / placement / floor", "tail: n, mean s, wait / batch / placement / floor"], rows.flatMap(({ pool, source, splits }) => splits.map((t) => [
      `${pool} / ${source}`, t.at, t.policy, fmt.fixed(t.rate, 3),
      `${fmt.percent(t.all.wait)} / ${fmt.percent(t.all.batch)} / ${fmt.percent(t.all.gpu)} / ${fmt.percent(t.all.floor)}`,
      `${t.tail.workflows}, ${fmt.fixed(t.tail.meanLatencyS, 0)}, ${fmt.percent(t.tail.wait)} / ${fmt.percent(t.tail.batch)} / ${fmt.percent(t.tail.gpu)} / ${fmt.percent(t.tail.floor)}`,
    ]))),
  ].join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pools: { type: "string" }, sources: { type: "string" }, loads: { type: "string" }, scales: { type: "string" }, workflows: { type: "string" },
      seeds: { type: "string" }, ablation: { type: "string", default: "bench/results/ablation" }, out: { type: "string", default: "bench/results/frontier" }, help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const pools = values.pools === undefined ? Object.keys(POOLS) : listArg("pools", values.pools);
  pools.forEach(checkPool);
  const sources = values.sources === undefined ? [...SOURCES] : listArg("sources", values.sources);
  sources.forEach(checkSource);
  for (const s of sources) scenarioOf(pools[0] ?? "reference", s);
  const num = (name: string) => (x: string) => numberArg(name, x, 0);
  const o: FrontierOptions = {
    workflows: numberArg("workflows", values.workflows, 300, (n) => Number.isInteger(n) && n >= 20),
    window: 600,
    seed: 1,
    loads: values.loads === undefined ? [0.2, 0.5, 0.8] : listArg("loads", values.loads).map(num("loads")),
    scales: values.scales === undefined ? [1.5, 2, 3, 5] : listArg("scales", values.scales).map(num("scales")),
  };
  const seedCount = numberArg("seeds", values.seeds, 3, (n) => Number.isInteger(n) && n >= 0);
  const seeds = Array.from({ length: seedCount }, (_, i) => i + 1);
  const started = Date.now();
  const cells = pools.flatMap((pool) => sources.map((source) => ({ pool, source })));
  // Read (and check) the measured figures before any progress output, so a broken file is one line.
  const measuredBy = new Map(cells.map(({ pool, source }) => [`${pool}/${source}`, measuredOf(values.ablation, pool, source)]));
  const progress = progressBars();
  const bar = progress.steps("frontier", cells.length);
  const rows: Row[] = [];
  for (const { pool, source } of cells) {
    const s = scenarioOf(pool, source);
    const measured = measuredBy.get(`${pool}/${source}`);
    rows.push({ pool, source, measured, frontier: scenarioFrontier(s, scenarioBaseSlo(s), measured?.limits.saturation, o), splits: timeSplits(s, measured, seeds) });
    bar.step(`${pool}/${source}`);
  }
  bar.done("frontier measured");
  progress.stop();
  const minutes = (Date.now() - started) / 60_000;
  mkdirSync(values.out, { recursive: true });
  const report = { generatedAt: new Date().toISOString(), minutes, options: o, pools: Object.fromEntries(pools.map((p) => [p, POOLS[p] ?? p])), scenarios: rows.map(({ pool, source, frontier, splits }) => ({ pool, source, ...frontier, timeSplits: splits })) };
  // Five significant digits, one scenario per line: the curves hold hundreds of points.
  const rounded = (_: string, v: unknown): unknown => (typeof v === "number" && Number.isFinite(v) ? Number(v.toPrecision(5)) : v);
  const { scenarios, ...head } = report;
  writeFileSync(join(values.out, "frontier-latest.json"), `{${JSON.stringify(head, rounded).slice(1, -1)},"scenarios":[\n${scenarios.map((s) => JSON.stringify(s, rounded)).join(",\n")}\n]}\n`);
  const mdPath = join(values.out, "frontier-latest.md");
  writeFileSync(mdPath, markdown(rows, o, minutes));
  process.stdout.write(renderTable(
    [{ header: "scenario", align: "left" }, { header: "frontier sat wf/s" }, { header: "measured" }, { header: "P95 @80% ≥ × floor" }, { header: "cap@2x ≤ wf/s" }, { header: "best baseline @2x" }],
    rows.map(({ pool, source, frontier: f, measured: m }) => [`${pool}/${source}`, fmt.fixed(f.saturation, 3), fmt.fixed(m?.limits.saturation, 3), fmt.times(atLoad(f.loads, 0.8)?.p95OverFloor), fmt.fixed(f.capacity.find((c) => c.scale === 2)?.capacity, 3), fmt.fixed(bestBaseline(m, 2)?.capacity, 3)]),
    `Service frontier (${minutes.toFixed(1)} min): ${mdPath}`,
  ));
}

runCli(main);
