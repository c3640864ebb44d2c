/**
 * `npm run bench:ablation` end to end on a small synthetic run: child processes, the limits, every policy's
 * figures against them, and the report files.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headline, type AblationReport } from "../../scripts/lib/ablation-report";
import { baseSloSeconds } from "../../src/core/slo";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { latencyFloor } from "../../src/sim/limits";
import { buildWorkload } from "../../src/sim/workload";

const run = (...args: string[]) => spawnSync("npx", ["tsx", "scripts/bench-ablation.ts", ...args], { encoding: "utf8", timeout: 120_000 });

describe("bench:ablation", () => {
  it("measures the limits and reads each policy against them", () => {
    const out = mkdtempSync(join(tmpdir(), "hexflow-ablation-"));
    const r = run("--pools", "reference", "--sources", "synthetic", "--policies", "rr-fcfs,edf", "--seeds", "2", "--workflows", "60", "--scales", "2", "--out", out);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "ablation-latest.json"), "utf8")) as AblationReport;
    const [s] = report.scenarios;
    if (s === undefined) throw new Error("no scenario");
    const { limits } = s;
    expect(limits.saturation).toBe(Math.max(...Object.values(limits.byPolicy)));
    // Overload really overloads: no policy completes more than 60% of what arrives.
    expect(limits.saturation).toBeLessThanOrEqual(0.6 * limits.overloadRate);
    // The share of workflows that could meet the SLO at all: the floor's own critical paths against 2x the base SLO.
    const instances = buildInstances(REFERENCE_POOL);
    const paths = [...latencyFloor("vllm", instances, buildWorkload({ kind: "synthetic" }, 300, 1, 1)).perWorkflow.values()];
    const fits = paths.filter((t) => t <= 2 * baseSloSeconds(instances) + 1e-9).length / paths.length;
    expect(limits.withinSloAtFloor).toEqual({ "2": fits });
    // Round-robin ignores GPU speed and load: it saturates well below a load-aware deadline order.
    expect(limits.byPolicy["rr-fcfs"] ?? Infinity).toBeLessThan(limits.byPolicy["edf"] ?? 0);
    expect(s.policies.map((p) => p.policy)).toEqual(["rr-fcfs", "edf"]);
    for (const p of s.policies) {
      expect(p.loads.map((l) => l.load)).toEqual([0.5, 0.8]);
      for (const l of p.loads) {
        expect(l.rate).toBeCloseTo(l.load * limits.saturation, 9);
        expect(l.p95OverFloor, `${p.policy} at ${l.load}`).toBeGreaterThan(1);
        // Pooled attainment is a mean of the per-seed ones, so it lies within their range.
        expect(l.attainmentRange[0]).toBeLessThanOrEqual(l.attainment + 1e-12);
        expect(l.attainmentRange[1]).toBeGreaterThanOrEqual(l.attainment - 1e-12);
        expect(l.p95RangeS[0]).toBeLessThanOrEqual(l.p95RangeS[1]);
      }
      const cap = p.capacity[0];
      expect(cap?.scale).toBe(2);
      expect(cap?.ofSaturation ?? Infinity).toBeLessThanOrEqual(1.1);
    }
    const md = readFileSync(join(out, "ablation-latest.md"), "utf8");
    expect(md).toContain("## reference (A100,A100,A6000,L40S), synthetic");
    expect(md).toContain(`Workflows whose critical path fits the SLO: 2x ${Math.round(fits * 100)}%`);
    // Each load-point figure carries its per-seed range.
    expect(md).toMatch(/\| edf \| [\d.]+ \([\d.]+x\) \d+–\d+ \| \d+% \d+%–\d+% \|/);
    expect(r.stdout).toContain("reference/synthetic");
  }, 150_000);

  it("compares the best entry that is not a baseline with the best of edf, least-loaded and hexgen", () => {
    const policy = (name: string, capacity: number) => ({ policy: name, loads: [], capacity: [{ scale: 2, alpha: null, capacity, ofSaturation: capacity }] });
    const limits = { floorP50S: 1, floorP95S: 2, saturation: 1, byPolicy: {}, overloadRate: 2 };
    const s = { pool: "p", source: "s", limits, policies: [policy("rr-fcfs", 0.9), policy("edf", 0.4), policy("hexgen", 0.5), policy("hexgen-lst", 0.45), policy("hexflow-all", 0.55)] };
    // rr-fcfs is a baseline but not a strong one: it is neither the bar nor the challenger.
    expect(headline(s, 2)).toEqual({ best: "hexgen", challenger: "hexflow-all", ratio: 0.55 / 0.5 });
    expect(headline({ ...s, policies: s.policies.slice(0, 3) }, 2)).toEqual({ best: "hexgen", challenger: "", ratio: undefined });
  });

  it("refuses an unknown pool, source or policy with one line and exit 2", () => {
    for (const args of [["--pools", "mars"], ["--sources", "trace9"], ["--policies", "nope"]]) {
      const r = run(...args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  }, 60_000);
});
