/**
 * `npm run sim:coordinator` feeds docs/scaling.md's sharding rule: its stage and call counts per workflow must be
 * those of the workload, and the simulation must run every call of it.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const run = (...args: string[]) => spawnSync("npx", ["tsx", "scripts/coordinator-load.ts", ...args], { encoding: "utf8" });

describe("sim:coordinator", () => {
  it("counts a CHESS workload's stages and calls, and the simulation runs every call", () => {
    // The synthetic generator (fitted to the CHESS traces) needs no ../shared/data, which a fresh clone lacks.
    const r = run("--trace", "synthetic", "--workflows", "90", "--seed", "3");
    expect(r.status, r.stderr).toBe(0);
    const head = /, (\d+) workflows, seed 3; simulated calls (\d+) \(workload (\d+)\), (\d+) finished/.exec(r.stdout);
    expect(head, r.stdout).not.toBeNull();
    const [n = 0, simulated, workload = 0, finished] = (head ?? []).slice(1).map(Number);
    expect(n).toBe(90);
    expect(finished).toBe(n);
    expect(simulated).toBe(workload);
    const row = (name: string) => (r.stdout.split("\n").find((l) => l.startsWith(`| ${name}`)) ?? "").split("|").slice(2, 6).map(Number);
    const [stagesMean = 0, , , stagesMax = 0] = row("stages");
    const [callsMean = 0, , , callsMax = 0] = row("calls");
    // CHESS: 15 template stages with 0-10 correction rounds, 1.3 calls per stage on average.
    expect(stagesMean).toBeGreaterThan(10);
    expect(stagesMax).toBeLessThanOrEqual(28);
    expect(callsMean).toBeGreaterThan(stagesMean);
    expect(callsMean * n).toBeCloseTo(workload, -1);
    expect(callsMax).toBeGreaterThanOrEqual(stagesMax);
  });

  it("refuses a bad option with one line and exit 2", () => {
    const r = run("--workflows", "zero");
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
