/** `npm run bench:frontier`: the report beside a measured ablation, and one line for a user mistake. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const run = (...args: string[]) => spawnSync("npx", ["tsx", "scripts/bench-frontier.ts", ...args], { encoding: "utf8", timeout: 120_000 });

describe("bench:frontier", () => {
  it("takes loads against the measured saturation and sets the bounds beside the measured figures", () => {
    const dir = mkdtempSync(join(tmpdir(), "hexflow-frontier-"));
    const ablation = join(dir, "ablation");
    mkdirSync(join(ablation, "reference"), { recursive: true });
    const measured = {
      scenarios: [{
        source: "synthetic",
        limits: { saturation: 0.4, floorP95S: 100 },
        policies: [
          { policy: "hexgen", loads: [{ load: 0.8, p95OverFloor: 1.7 }], capacity: [{ scale: 2, capacity: 0.17 }] },
          { policy: "edf", loads: [], capacity: [{ scale: 2, capacity: 0.11 }] },
        ],
      }],
    };
    writeFileSync(join(ablation, "reference", "ablation-latest.json"), JSON.stringify(measured));
    const out = join(dir, "out");
    const r = run("--pools", "reference", "--sources", "synthetic", "--workflows", "60", "--loads", "0.8", "--scales", "2", "--seeds", "1", "--ablation", ablation, "--out", out);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "frontier-latest.json"), "utf8")) as { scenarios: { loadBasis: number; loads: { rate: number }[] }[] };
    expect(report.scenarios[0]?.loadBasis).toBe(0.4);
    expect(report.scenarios[0]?.loads[0]?.rate).toBeCloseTo(0.32, 9);
    const md = readFileSync(join(out, "frontier-latest.md"), "utf8");
    expect(md).toContain("| reference / synthetic |");
    expect(md).toMatch(/\(1\.70x\)/);
    expect(md).toContain("(hexgen 0.170)");
    // Where the time goes, at hexgen's measured capacity (the best of the baselines here) and at 80% load.
    expect(md).toMatch(/\| reference \/ synthetic \| cap@2x \(missed\) \| hexgen \| 0\.170 \| \d+% \/ \d+% \/ \d+% \/ \d+% \|/);
    expect(md).toMatch(/\| reference \/ synthetic \| 80% load \(≥ P95\) \| hexgen \| 0\.320 \|/);
    expect(r.stdout).toContain("reference/synthetic");
  }, 150_000);

  it("answers a bad option or a broken ablation file with one line and a non-zero exit", () => {
    const r = run("--pools", "nowhere");
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining('unknown pool "nowhere"')]);
    const dir = mkdtempSync(join(tmpdir(), "hexflow-frontier-bad-"));
    mkdirSync(join(dir, "reference"));
    writeFileSync(join(dir, "reference", "ablation-latest.json"), "{not json");
    const broken = run("--pools", "reference", "--sources", "synthetic", "--workflows", "20", "--ablation", dir, "--out", join(dir, "out"));
    expect(broken.status).toBe(2);
    expect(broken.stderr.trim().split("\n")).toEqual([expect.stringContaining("is not JSON")]);
  }, 60_000);
});
