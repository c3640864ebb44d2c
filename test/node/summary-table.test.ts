import { describe, expect, it } from "vitest";
import type { PolicyResult, ScenarioResult } from "../../src/sim/benchmark";
import { benchConsoleTable } from "../../scripts/lib/bench-report";
import { chaosFigures, chaosVerdict, type PlannedWorkflow } from "../../scripts/lib/chaos-check";
import { chaosConsoleTable } from "../../scripts/lib/chaos-report";
import type { ChaosRun } from "../../scripts/lib/chaos-run";
import { e2eConsoleTable, summarize, type E2eRun, type Measure } from "../../scripts/lib/e2e-report";
import { fmt, renderTable } from "../../scripts/lib/summary-table";

const ANSI = /\u001b/;
const cells = (l: string | undefined): string[] => (l ?? "").split("│").slice(1, -1).map((c) => c.trim());

describe("renderTable", () => {
  const table = renderTable(
    [{ header: "policy", align: "left" }, { header: "P95 s" }, { header: "att@5x" }],
    [
      ["hexgen", "12.3", "95%"],
      ["rr-fcfs", "101.0", "40%"],
      ["edf", null, Number.NaN],
    ],
    "rate 0.5",
  );
  const lines = table.trimEnd().split("\n");

  it("holds the title, the headers and every value, a missing one as –", () => {
    expect(lines[0]).toBe("rate 0.5");
    expect(lines[2]).toBe("│ policy  │ P95 s │ att@5x │");
    expect(lines[4]).toBe("│ hexgen  │  12.3 │    95% │");
    expect(lines[5]).toBe("│ rr-fcfs │ 101.0 │    40% │");
    expect(lines[6]).toBe("│ edf     │     – │      – │");
  });

  it("lines the columns up: every line as wide, names left, figures right", () => {
    const body = lines.slice(1);
    expect(new Set(body.map((l) => [...l].length)).size).toBe(1);
    const sep = (l: string): number[] => [...l].flatMap((c, i) => ("│┼┬┴├┤┌┐└┘".includes(c) ? [i] : []));
    for (const l of body) expect(sep(l)).toEqual(sep(body[0] ?? ""));
    // Right-aligned: the last digit of each figure sits just before the column's right border.
    expect(lines[4]?.indexOf("12.3 │")).toBe(lines[5]?.indexOf("01.0 │"));
  });

  it("has no colour codes, so logs and pipes get plain text", () => {
    expect(table).not.toMatch(ANSI);
  });
});

describe("fmt", () => {
  it("formats figures and marks what is missing", () => {
    expect([fmt.fixed(1.25, 1), fmt.percent(0.953), fmt.times(1.5), fmt.fixed(Number.NaN, 1), fmt.percent(undefined), fmt.times(Number.POSITIVE_INFINITY)]).toEqual(["1.3", "95%", "1.50x", "–", "–", "–"]);
  });
});

describe("benchConsoleTable", () => {
  const policy = (p95: number, capacity: number): PolicyResult => ({
    alpha: null,
    latency: { mean: p95 / 2, p50: p95 / 2, p95, p99: p95 * 1.1 },
    attainment: { "3": 0.5, "5": 0.9, "8": 1 },
    curve: [],
    throughput: 0.3,
    capacity,
  });
  const row: ScenarioResult = { engine: "vllm", trace: "synthetic", rate: 0.5, baseSloS: 70, policies: { "rr-fcfs": policy(300, 0.2), hexgen: { ...policy(200, 0.3), alpha: 0.7 } } };

  it("has one row per policy with its latencies, attainment at the SLO scale, throughput and ratios to rr-fcfs", () => {
    const lines = benchConsoleTable([row], { sloScale: 5 }).trimEnd().split("\n");
    expect(cells(lines[2])).toEqual(["engine / trace / rate", "policy", "α", "mean s", "P95 s", "P99 s", "att@5x", "thr wf/s", "capacity wf/s", "P95 vs rr-fcfs", "capacity vs rr-fcfs"]);
    expect(cells(lines[4])).toEqual(["vllm synthetic @0.5", "rr-fcfs", "–", "150.0", "300.0", "330.0", "90%", "0.300", "0.200", "1.00x", "1.00x"]);
    expect(cells(lines[5])).toEqual(["", "hexgen", "0.70", "100.0", "200.0", "220.0", "90%", "0.300", "0.300", "1.50x", "1.50x"]);
  });
});

describe("e2eConsoleTable", () => {
  const m = (p95: number, failed = 0): Measure => ({ latency: { mean: p95 / 2, p50: p95 / 2, p95, p99: p95 + 10 }, attainment: { "3": 0.5, "5": 0.75, "8": 1 }, throughput: 0.25, latencies: [p95], workflows: 4, failed });
  const run = (policy: string, seed: number, p95: number): E2eRun => ({ rate: 0.5, seed, policy, alpha: policy === "hexgen" ? 0.7 : null, e2e: { ...m(p95, policy === "hexgen" ? 1 : 0), wallMs: 1000, lateP99Ms: 1, errors: {} }, sim: m(p95 * 0.9) });

  it("has one row per policy and rate, with the end-to-end figures, the spread of the ratio to rr-fcfs and the simulator's P95", () => {
    const summary = summarize([run("rr-fcfs", 1, 300), run("hexgen", 1, 200), run("rr-fcfs", 2, 300), run("hexgen", 2, 150)], [3, 5, 8]);
    const lines = e2eConsoleTable(summary, 5).trimEnd().split("\n");
    expect(cells(lines[2])).toEqual(["rate wf/s", "policy", "α", "mean s", "P95 s", "P99 s", "att@5x", "thr wf/s", "failed", "P95 vs rr-fcfs", "sim P95 s", "P95 e2e vs sim"]);
    // Latencies are pooled over seeds from the runs' own latencies (one each here).
    expect(cells(lines[4])).toEqual(["0.5", "rr-fcfs", "–", "300.0", "300.0", "300.0", "75%", "0.250", "0/8", "1.00x [1.00–1.00]", "270.0", "+11%"]);
    expect(cells(lines[5])?.slice(0, 2)).toEqual(["", "hexgen"]);
    expect(cells(lines[5])?.[8]).toBe("2/8");
    expect(cells(lines[5])?.[9]).toBe("1.50x [1.50–2.00]");
  });
});

describe("chaosConsoleTable", () => {
  const planned: PlannedWorkflow[] = [
    { index: 0, key: "k0", arrivalS: 0, submit: { ids: ["wf_a"], replayed: 0, attempts: 1, retriedFor: [] }, final: { kind: "view", view: { id: "wf_a", status: "succeeded", latencyMs: 10_000, sloMs: 20_000, sloMet: true, stages: [{ calls: [{ id: "wf_a:0:0", instance: "a", finishedMs: 5 }] }] } } },
    { index: 1, key: "k1", arrivalS: 1, submit: { ids: ["wf_b"], replayed: 0, attempts: 1, retriedFor: [] }, final: { kind: "not-found" } },
  ];
  const figures = chaosFigures(planned, null, { lines: [{ callId: "wf_a:0:0", atMs: 0, port: 1 }, { callId: "wf_a:0:0", atMs: 5, port: 2 }], torn: 0 });
  const chaos: ChaosRun = {
    options: { seed: 1, durationS: 10, rate: 0.2, timeScale: 10, faults: true, timeoutS: 30 },
    fleet: [],
    schedule: null,
    events: [],
    counts: { kills: 0, restarts: 0, bursts: 0, workerRestarts: 0, failedActions: 0 },
    deadShare: null,
    figures,
    verdict: chaosVerdict(figures),
    wall: { loadS: 1, drainS: 1, totalS: 2 },
    stateDir: "/tmp/x",
  };

  it("shows accepted, succeeded, failed, lost, duplicated and max executions per run, the P95 ratio and the verdict", () => {
    const text = chaosConsoleTable(chaos, { ...chaos, figures: { ...figures, p95S: 5 } });
    const lines = text.trimEnd().split("\n");
    expect(cells(lines[2])).toEqual(["run", "accepted", "refused", "succeeded", "failed", "lost", "duplicated", "max executions", "P50 s", "P95 s", "SLO att."]);
    expect(cells(lines[4])).toEqual(["with faults", "2", "0", "1", "0", "1", "0", `2 (bound ${figures.retry.bound})`, "10.0", "10.0", "50%"]);
    expect(cells(lines[5])?.[0]).toBe("baseline (no faults)");
    expect(lines.at(-1)).toBe("P95 with faults / without: 2.00x; verdict: FAIL (1 lost)");
    expect(text).not.toMatch(ANSI);
  });
});
