import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
function sim(args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/sim.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("npm run sim", () => {
  it("prints exactly one JSON object with the documented fields", () => {
    const r = sim(["--policy", "hexgen", "--workflows", "40", "--rate", "0.2", "--alpha", "0.6", "--cluster", "A100x2,L40S", "--json"]);
    expect(r.code).toBe(0);
    const lines = r.out.trim().split("\n");
    expect(lines).toHaveLength(1);
    const j: unknown = JSON.parse(lines[0] ?? "");
    expect(j).toMatchObject({ policy: "hexgen", alpha: 0.6, cluster: "A100,A100,L40S", rate: 0.2, seed: 1, workflows: 40, sloScale: 5 });
    for (const k of ["baseSloS", "attainment", "throughput", "calls", "simWallMs"]) expect(j).toHaveProperty(k);
    expect(j).toHaveProperty("latency.p95");
  }, 60_000);

  it.each([
    [["--policy", "nope"], /^error: unknown policy "nope"/],
    [["--cluster", "A100,TPU"], /^error: unknown GPU "TPU"/],
    [["--trace", "/no/such/file.json"], /^error: trace file not found/],
    [["--rate", "0"], /^error: --rate must be/],
    [["--engine", "tpu"], /^error: --engine must be vllm or parity/],
    [["--bogus"], /^error: Unknown option '--bogus'/],
  ])("rejects %j with one line and exit code 2", (args, message) => {
    const r = sim(args);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(r.out).toBe("");
  }, 60_000);

  it("names the bad entry of a malformed trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "hexflow-"));
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify([{ Text2SQLRequest: [{ step: "revise", input_length: 5, output_length: 0 }] }]));
    const r = sim(["--trace", file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.json: entry 0 field Text2SQLRequest\[0\]\.output_length/);
  }, 60_000);
});
