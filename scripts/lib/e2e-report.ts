/**
 * Measures and tables for `npm run bench:e2e`, in the simulator benchmark's shape: per rate, every
 * policy's latency percentiles, attainment at several SLO scales and throughput (pooled over seeds),
 * ratios to rr-fcfs with their spread over seeds, and the end-to-end vs simulator difference.
 */
import { percentile } from "../../src/core/stats";
import { latencySummary, type LatencySummary } from "../../src/sim/metrics";
import type { WorkflowResult } from "../../src/sim/simulator";
import type { LoadgenWorkflow } from "./loadgen-events";
import { fmt, renderTable, type Column } from "./summary-table";

export interface Measure {
  latency: LatencySummary;
  /** Share of all submitted workflows that succeeded within k × base SLO, per k. */
  attainment: Record<string, number>;
  /** Finished workflows per pool-clock second, first arrival to last finish. */
  throughput: number;
  /** Latencies in pool seconds of the workflows that succeeded. */
  latencies: number[];
  workflows: number;
  failed: number;
}

export interface E2eRun {
  rate: number;
  seed: number;
  policy: string;
  alpha: number | null;
  e2e: Measure & { wallMs: number; lateP99Ms: number; errors: Record<string, number> };
  sim: Measure;
}

function measure(latencies: number[], firstArrivalS: number, lastFinishS: number, total: number, baseSloS: number, scales: readonly number[]): Measure {
  const attainment: Record<string, number> = {};
  for (const k of scales) attainment[String(k)] = latencies.filter((l) => l <= k * baseSloS + 1e-9).length / Math.max(1, total);
  return {
    latency: latencySummary(latencies),
    attainment,
    throughput: latencies.length > 0 && lastFinishS > firstArrivalS ? latencies.length / (lastFinishS - firstArrivalS) : Number.NaN,
    latencies,
    workflows: total,
    failed: total - latencies.length,
  };
}

/** Why workflows did not succeed, by message, with counts. */
export function errorCounts(ws: readonly LoadgenWorkflow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of ws) {
    if (w.status === "succeeded") continue;
    const reason = `${w.status}: ${w.error ?? "no reason"}`;
    out[reason] = (out[reason] ?? 0) + 1;
  }
  return out;
}

/** Arrivals are the gateway's creation times on the pool clock; latencies are what the system measured. */
export function measureE2e(ws: readonly LoadgenWorkflow[], timeScale: number, baseSloS: number, scales: readonly number[]): Measure {
  const done = ws.flatMap((w) => (w.status === "succeeded" && w.latencyMs !== null && w.createdAtMs !== null ? [{ at: w.createdAtMs, latencyS: w.latencyMs / 1000 }] : []));
  const t0 = Math.min(...done.map((d) => d.at));
  const arrival = (d: { at: number }): number => ((d.at - t0) / 1000) * timeScale;
  const lastFinish = Math.max(...done.map((d) => arrival(d) + d.latencyS));
  return measure(
    done.map((d) => d.latencyS),
    0,
    lastFinish,
    ws.length,
    baseSloS,
    scales,
  );
}

export function measureSim(rs: readonly WorkflowResult[], total: number, baseSloS: number, scales: readonly number[]): Measure {
  const first = Math.min(...rs.map((r) => r.arrivalS));
  const last = Math.max(...rs.map((r) => r.finishS));
  return measure(
    rs.map((r) => r.latencyS),
    first,
    last,
    total,
    baseSloS,
    scales,
  );
}

/** Latencies pooled over seeds; attainment over all workflows; throughput the mean over seeds. */
export function pool(ms: readonly Measure[], scales: readonly number[]): Measure {
  const latencies = ms.flatMap((m) => m.latencies);
  const total = ms.reduce((k, m) => k + m.workflows, 0);
  const attainment: Record<string, number> = {};
  for (const k of scales) attainment[String(k)] = ms.reduce((s, m) => s + (m.attainment[String(k)] ?? 0) * m.workflows, 0) / Math.max(1, total);
  const thr = ms.map((m) => m.throughput).filter(Number.isFinite);
  return {
    latency: latencySummary(latencies),
    attainment,
    throughput: thr.length > 0 ? thr.reduce((a, b) => a + b, 0) / thr.length : Number.NaN,
    latencies,
    workflows: total,
    failed: ms.reduce((k, m) => k + m.failed, 0),
  };
}

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "–");
const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : "–");
const pct = (n: number | undefined): string => (n !== undefined && Number.isFinite(n) ? `${(100 * n).toFixed(0)}%` : "–");
const diff = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${a >= b ? "+" : ""}${((100 * (a - b)) / b).toFixed(0)}%` : "–");

export interface RateSummary {
  rate: number;
  policies: { policy: string; alpha: number | null; e2e: Measure; sim: Measure; p95VsRr: number[]; simP95VsRr: number[] }[];
  /** Policies from lowest to highest pooled P95. */
  orderE2e: string[];
  orderSim: string[];
}

export function summarize(runs: readonly E2eRun[], scales: readonly number[]): RateSummary[] {
  const rates = [...new Set(runs.map((r) => r.rate))];
  return rates.map((rate) => {
    const here = runs.filter((r) => r.rate === rate);
    const policies = [...new Set(here.map((r) => r.policy))].map((policy) => {
      const mine = here.filter((r) => r.policy === policy);
      const ratio = (pick: (r: E2eRun) => Measure): number[] =>
        mine.flatMap((r) => {
          const base = here.find((b) => b.policy === "rr-fcfs" && b.seed === r.seed);
          return base === undefined ? [] : [pick(base).latency.p95 / pick(r).latency.p95];
        });
      return {
        policy,
        alpha: mine[0]?.alpha ?? null,
        e2e: pool(
          mine.map((r) => r.e2e),
          scales,
        ),
        sim: pool(
          mine.map((r) => r.sim),
          scales,
        ),
        p95VsRr: ratio((r) => r.e2e),
        simP95VsRr: ratio((r) => r.sim),
      };
    });
    const order = (pick: (p: (typeof policies)[number]) => Measure): string[] => [...policies].sort((a, b) => pick(a).latency.p95 - pick(b).latency.p95).map((p) => p.policy);
    return { rate, policies, orderE2e: order((p) => p.e2e), orderSim: order((p) => p.sim) };
  });
}

/** "1.9x [1.6–2.3]": median over seeds and the range. */
export function spread(xs: readonly number[]): string {
  if (xs.length === 0) return "–";
  return `${percentile(xs, 0.5).toFixed(2)}x [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
}

export function rateTables(s: RateSummary, scales: readonly number[]): string {
  const head = ["policy", "α", "P50 s", "P95 s", "P99 s", ...scales.map((k) => `att@${k}x`), "thr wf/s", "failed", "P95 vs rr-fcfs (median [range] over seeds)", "same in sim"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const p of s.policies) {
    const e = p.e2e;
    lines.push(
      `| ${p.policy} | ${p.alpha === null ? "–" : p.alpha.toFixed(2)} | ${f1(e.latency.p50)} | ${f1(e.latency.p95)} | ${f1(e.latency.p99)} | ${scales
        .map((k) => pct(e.attainment[String(k)]))
        .join(" | ")} | ${f3(e.throughput)} | ${e.failed} | ${spread(p.p95VsRr)} | ${spread(p.simP95VsRr)} |`,
    );
  }
  const fhead = ["policy", "P50 e2e / sim", "P95 e2e / sim", "P99 e2e / sim", "att@5x e2e / sim", "thr e2e / sim"];
  const flines = [`| ${fhead.join(" | ")} |`, `|${fhead.map(() => "---").join("|")}|`];
  for (const p of s.policies) {
    const cell = (pick: (m: Measure) => number, fmt: (n: number) => string): string => `${fmt(pick(p.e2e))} / ${fmt(pick(p.sim))} (${diff(pick(p.e2e), pick(p.sim))})`;
    flines.push(
      `| ${p.policy} | ${cell((m) => m.latency.p50, f1)} | ${cell((m) => m.latency.p95, f1)} | ${cell((m) => m.latency.p99, f1)} | ${cell((m) => m.attainment["5"] ?? Number.NaN, pct)} | ${cell((m) => m.throughput, f3)} |`,
    );
  }
  const same = s.orderE2e.join(",") === s.orderSim.join(",");
  return [
    `### ${s.rate} workflows/s\n`,
    lines.join("\n"),
    `\nPolicies by P95, end to end: ${s.orderE2e.join(" < ")}; simulator: ${s.orderSim.join(" < ")} (${same ? "same order" : "order differs"}).\n`,
    "Fidelity, end to end / simulator (difference):\n",
    flines.join("\n"),
  ].join("\n");
}

/** The table `npm run bench:e2e` ends with: per rate and policy, the end-to-end figures and the simulator's P95 beside them. */
export function e2eConsoleTable(summary: readonly RateSummary[], sloScale: number): string {
  const columns: Column[] = [
    { header: "rate wf/s", align: "left" },
    { header: "policy", align: "left" },
    { header: "α" },
    { header: "mean s" },
    { header: "P95 s" },
    { header: "P99 s" },
    { header: `att@${sloScale}x` },
    { header: "thr wf/s" },
    { header: "failed" },
    { header: "P95 vs rr-fcfs" },
    { header: "sim P95 s" },
    { header: "P95 e2e vs sim" },
  ];
  const rows = summary.flatMap((s) =>
    s.policies.map((p, i) => [
      i === 0 ? String(s.rate) : "",
      p.policy,
      p.alpha === null ? "–" : fmt.fixed(p.alpha, 2),
      fmt.fixed(p.e2e.latency.mean, 1),
      fmt.fixed(p.e2e.latency.p95, 1),
      fmt.fixed(p.e2e.latency.p99, 1),
      fmt.percent(p.e2e.attainment[String(sloScale)]),
      fmt.fixed(p.e2e.throughput, 3),
      `${p.e2e.failed}/${p.e2e.workflows}`,
      spread(p.p95VsRr),
      fmt.fixed(p.sim.latency.p95, 1),
      diff(p.e2e.latency.p95, p.sim.latency.p95),
    ]),
  );
  return renderTable(columns, rows, "End-to-end benchmark (pool-clock seconds, pooled over seeds; P95 vs rr-fcfs: median [range] over seeds)");
}
