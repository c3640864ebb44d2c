import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const TSX = join(process.cwd(), "node_modules/.bin/tsx");
const run = (script: string, args: string[]) => spawnSync(TSX, [join(process.cwd(), script), ...args], { encoding: "utf8", timeout: 180_000 });

interface Report {
  runs: { policy: string; e2e: { workflows: number; failed: number; latency: { p95: number } }; sim: { workflows: number; latency: { p95: number } } }[];
}

describe("npm run bench:e2e, smoke size", () => {
  it("runs two policies on the emulated reference pool through a separate load generator and compares with the simulator", () => {
    const out = mkdtempSync(join(tmpdir(), "hexflow-bench-e2e-"));
    const r = run("scripts/bench-e2e.ts", ["--workflows", "4", "--rate", "0.5", "--seed", "3", "--policy", "rr-fcfs,hexgen", "--time-scale", "50", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    // Without a terminal the progress bar falls back to one line per run.
    expect(r.stderr).toMatch(/rate 0\.5 seed 3 hexgen: 4\/4 succeeded/);
    const report = JSON.parse(readFileSync(join(out, "e2e-latest.json"), "utf8")) as Report;
    expect(report.runs.map((x) => x.policy)).toEqual(["rr-fcfs", "hexgen"]);
    for (const x of report.runs) {
      expect(x.e2e).toMatchObject({ workflows: 4, failed: 0 });
      expect(x.e2e.latency.p95).toBeGreaterThan(0);
      expect(x.sim.workflows).toBe(4);
      expect(x.sim.latency.p95).toBeGreaterThan(0);
    }
    const md = readFileSync(join(out, "e2e-latest.md"), "utf8");
    expect(md).toContain("| hexgen | 0.70 |");
    expect(md).toContain("Fidelity, end to end / simulator");
  });

  it("refuses bad input with one line and exit code 2, before starting anything", () => {
    const bad = run("scripts/bench-e2e.ts", ["--policy", "rr-fcfs,nope"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^error: unknown policy "nope"/);
    const remote = run("scripts/loadgen.ts", ["--url", "http://example.com:8787"]);
    expect(remote.status).toBe(2);
    expect(remote.stderr.trim()).toBe("error: --url must be on this machine (127.0.0.1 or localhost), got example.com");
  });
});
