/**
 * `npm run calibrate` against a real emulator process: the fit must recover the profile the emulator
 * was configured with (src/core/cost-model.ts DEFAULT_COSTS.A100).
 *
 * Tolerances (docs/calibration.md has the measured figures): decode 5%. Overhead and prefill 5% plus
 * the timing resolution: every time-to-first-token is read on the wall clock, where the client's and
 * the emulator's HTTP handling and timers add 1-4 ms (the emulator's step timers fire up to ~1 ms late; a completion request costs more to
 * handle than the idle /health round trip subtracted from it), multiplied by the time scale into
 * server time. The A100 profile's prefill over a whole one-step prompt (≤ 2048 tokens, the engine's
 * max_num_batched_tokens; a longer prompt pays one more decode step per chunk, so the linear fit's
 * prefill is then an effective one, not the configured one) is only 13 ms, so that jitter matters.
 */
import { spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defaultCost } from "../../src/core/cost-model";
import { killProcess, startEmulatorProcess } from "../../scripts/lib/emulator-process";

const TSX = join(process.cwd(), "node_modules/.bin/tsx");
const TIME_SCALE = 2;
/** Wall-clock resolution of one timed first token, in seconds (see the header): measured bias 1-4 ms. */
const WALL_JITTER_S = 0.004;

const ReportSchema = z.object({
  cost: z.object({ overheadS: z.number(), prefillS: z.number(), decodeS: z.number() }),
  fit: z.object({ medianRelError: z.number(), p90RelError: z.number(), r2: z.number() }),
  batch: z.object({ slopeS: z.number(), levels: z.array(z.object({ concurrency: z.number() })) }).nullable(),
  timeScale: z.number(),
  timeScaleSource: z.string(),
});

const calibrate = (args: string[]) => spawnSync(TSX, [join(process.cwd(), "scripts/calibrate.ts"), ...args], { encoding: "utf8", timeout: 90_000 });

describe("npm run calibrate on an emulated A100", () => {
  let emulator: { url: string; child: ChildProcess } | undefined;
  beforeAll(async () => {
    emulator = await startEmulatorProcess({ gpu: "A100", timeScale: TIME_SCALE, seed: 1, port: 0 });
  });
  afterAll(async () => {
    if (emulator !== undefined) await killProcess(emulator.child);
  });

  it("recovers the configured profile", () => {
    const url = emulator?.url ?? "";
    const r = calibrate(["--url", url, "--model", "llama-3.1-70b", "--inputs", "128,512,1024,1536,1900", "--outputs", "1,4,32", "--reps", "4", "--concurrency", "1,4", "--batch-input", "128", "--batch-output", "32", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const report = ReportSchema.parse(JSON.parse(r.stdout));
    const truth = defaultCost("A100");
    console.info(`calibrate fit ${JSON.stringify(report.cost)} vs configured ${JSON.stringify(truth)}, median error ${report.fit.medianRelError}`);
    const resolutionS = WALL_JITTER_S * TIME_SCALE;
    expect(report.timeScale).toBe(TIME_SCALE);
    expect(report.timeScaleSource).toBe("server");
    expect(Math.abs(report.cost.decodeS - truth.decodeS)).toBeLessThan(0.05 * truth.decodeS);
    expect(Math.abs(report.cost.overheadS - truth.overheadS)).toBeLessThan(0.05 * truth.overheadS + resolutionS);
    // Prefill's share of a TTFT over the grid's input spread, against the same resolution.
    const spread = 1900 - 128;
    expect(Math.abs(report.cost.prefillS - truth.prefillS)).toBeLessThan(0.05 * truth.prefillS + resolutionS / spread);
    expect(report.fit.medianRelError).toBeLessThan(0.02);
    expect(report.batch?.levels.map((l) => l.concurrency)).toEqual([1, 4]);
  });

  it("bad flags and a wrong model fail in one line", () => {
    const bad = calibrate(["--url", "nope", "--model", "x"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toEqual(["error: --url is not an http(s) URL: nope"]);
    const unknown = calibrate(["--url", emulator?.url ?? "", "--model", "gpt-9"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
    expect(unknown.stderr).toMatch(/does not serve model "gpt-9"/);
  });
});
