import type { BenchConfig, ScenarioResult } from "../../src/sim/benchmark";
import { fmt, renderTable, type Column } from "./summary-table";

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "–");
const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : "–");
const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : "–");
const pct = (n: number | undefined): string => (n !== undefined && Number.isFinite(n) ? `${(100 * n).toFixed(0)}%` : "–");
const ratio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : "–");

/** "x lower P95" of `p` against `base` and "x capacity", the paper's two headline ratios. */
export function ratios(r: ScenarioResult, p: string, base: string): { p95: number; capacity: number } {
  const a = r.policies[p];
  const b = r.policies[base];
  if (a === undefined || b === undefined) return { p95: Number.NaN, capacity: Number.NaN };
  return { p95: b.latency.p95 / a.latency.p95, capacity: a.capacity / b.capacity };
}

export function scenarioTable(r: ScenarioResult, cfg: Pick<BenchConfig, "tableScales">): string {
  const scales = cfg.tableScales.map((k) => `att@${k}x`);
  const head = ["policy", "α", "P50 s", "P95 s", "P99 s", ...scales, "thr wf/s", "capacity wf/s", "P95 vs rr-fcfs", "capacity vs rr-fcfs"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const [name, p] of Object.entries(r.policies)) {
    const x = ratios(r, name, "rr-fcfs");
    lines.push(
      `| ${name} | ${p.alpha === null ? "–" : f2(p.alpha)} | ${f1(p.latency.p50)} | ${f1(p.latency.p95)} | ${f1(p.latency.p99)} | ${cfg.tableScales
        .map((k) => pct(p.attainment[String(k)]))
        .join(" | ")} | ${f3(p.throughput)} | ${f3(p.capacity)} | ${ratio(x.p95)} | ${ratio(x.capacity)} |`,
    );
  }
  return lines.join("\n");
}

/** hexgen (and hexgen-parity) against each baseline, per scenario: P95 ratio / capacity ratio. */
export function summaryTable(rows: readonly ScenarioResult[]): string {
  const pairs: [string, string][] = [
    ["hexgen", "rr-fcfs"],
    ["hexgen-parity", "rr-fcfs"],
    ["hexgen", "least-loaded"],
    ["hexgen", "edf"],
  ];
  const head = ["engine", "trace", "rate", ...pairs.map(([a, b]) => `${a} vs ${b}`)];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const r of rows) {
    const cells = pairs.map(([a, b]) => {
      const x = ratios(r, a, b);
      return `${ratio(x.p95)} / ${ratio(x.capacity)}`;
    });
    lines.push(`| ${r.engine} | ${r.trace} | ${r.rate} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

export function markdownReport(rows: readonly ScenarioResult[], cfg: Pick<BenchConfig, "tableScales">, meta: string): string {
  const parts = [
    `# Simulator benchmark\n\n${meta}\n`,
    "## hexgen against the baselines (P95 ratio = baseline P95 / hexgen P95; capacity ratio = hexgen / baseline)\n",
    summaryTable(rows),
  ];
  for (const r of rows) {
    parts.push(`\n## ${r.engine} engine, ${r.trace}, ${r.rate} workflows/s (base SLO ${f1(r.baseSloS)} s)\n`, scenarioTable(r, cfg));
  }
  return `${parts.join("\n")}\n`;
}

/** The table `npm run bench` ends with: every policy of every scenario, the scenario named on its first row. */
export function benchConsoleTable(rows: readonly ScenarioResult[], cfg: Pick<BenchConfig, "sloScale">): string {
  const columns: Column[] = [
    { header: "engine / trace / rate", align: "left" },
    { header: "policy", align: "left" },
    { header: "α" },
    { header: "mean s" },
    { header: "P95 s" },
    { header: "P99 s" },
    { header: `att@${cfg.sloScale}x` },
    { header: "thr wf/s" },
    { header: "capacity wf/s" },
    { header: "P95 vs rr-fcfs" },
    { header: "capacity vs rr-fcfs" },
  ];
  const cells = rows.flatMap((r) =>
    Object.entries(r.policies).map(([name, p], i) => {
      const x = ratios(r, name, "rr-fcfs");
      return [
        i === 0 ? `${r.engine} ${r.trace} @${r.rate}` : "",
        name,
        p.alpha === null ? "–" : fmt.fixed(p.alpha, 2),
        fmt.fixed(p.latency.mean, 1),
        fmt.fixed(p.latency.p95, 1),
        fmt.fixed(p.latency.p99, 1),
        fmt.percent(p.attainment[String(cfg.sloScale)]),
        fmt.fixed(p.throughput, 3),
        fmt.fixed(p.capacity, 3),
        fmt.times(x.p95),
        fmt.times(x.capacity),
      ];
    }),
  );
  return renderTable(columns, cells, "Simulator benchmark (latencies pooled over seeds; ratios: rr-fcfs P95 / policy P95, policy capacity / rr-fcfs capacity)");
}
