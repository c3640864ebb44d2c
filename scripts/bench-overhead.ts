/**
 * Serving-path overhead per LLM call (issue 4, part 3): the emulated fleet runs at the highest time
 * scale (10,000x), so GPU time is microseconds and what a call costs is the path itself: the
 * coordinator's stage release, the instance queue, the streamed HTTP call to the emulator and the
 * completion report. `npm run bench:overhead -- [--workflows 20] [--calls 20] [--state-dir DIR]`.
 *
 * Every hop waits for Durable Object storage commits (output gates hold a message until the writes
 * before it are durable), so where the local state lives matters: the default is a fresh folder
 * under the OS temp dir (disk here); `--state-dir /dev/shm/...` puts it in memory.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { percentile } from "../src/core/stats";
import { numberArg, runCli } from "./lib/cli";
import { submitReplay, waitForAll } from "./lib/replay";
import { defaultCost, estimateSeconds } from "../src/core/cost-model";
import { startStack } from "./lib/stack";

const SCALE = 10_000;

runCli(async () => {
  const { values } = parseArgs({ options: { workflows: { type: "string" }, calls: { type: "string" }, "state-dir": { type: "string" } }, strict: true });
  const n = numberArg("workflows", values.workflows, 20, (x) => Number.isInteger(x) && x > 0 && x <= 200);
  const k = numberArg("calls", values.calls, 20, (x) => Number.isInteger(x) && x > 1 && x <= 200);
  const stack = await startStack({ fleet: ["A100"], timeScale: SCALE, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(values["state-dir"] ?? tmpdir(), "hexflow-overhead-")), quiet: true });
  try {
    const hops: number[] = [];
    const parts = { report: [] as number[], dispatch: [] as number[], queue: [] as number[], call: [] as number[] };
    const calls = Array.from({ length: k }, () => ({ step: "unit_tester", inputTokens: 275, outputTokens: 4 }));
    for (let i = 0; i < n; i++) {
      // One workflow at a time: every hop is the path's own cost, with no queueing behind others.
      const id = await submitReplay(stack, { kind: "replay", calls });
      const w = (await waitForAll(stack, [id], { pollMs: 20, timeoutMs: 60_000 })).get(id);
      if (w === undefined) throw new Error(`workflow ${id} did not end within 60 s`);
      const c = w.stages.map((s) => s.calls[0]);
      // Finish of call j-1 to finish of call j, in real ms, split where the objects stamp it:
      // report + completion + release (finish -> released), dispatch RPC to the instance (-> enqueued),
      // waiting for a slot (-> admitted), the streamed HTTP call to the emulator (-> finished).
      for (let j = 1; j < c.length; j++) {
        const prev = c[j - 1]?.finishedMs;
        const cur = c[j];
        if (prev == null || cur == null || cur.releasedMs === null || cur.enqueuedMs === null || cur.admittedMs === null || cur.finishedMs === null) continue;
        hops.push((cur.finishedMs - prev) / SCALE);
        parts.report.push((cur.releasedMs - prev) / SCALE);
        parts.dispatch.push((cur.enqueuedMs - cur.releasedMs) / SCALE);
        parts.queue.push((cur.admittedMs - cur.enqueuedMs) / SCALE);
        parts.call.push((cur.finishedMs - cur.admittedMs) / SCALE);
      }
    }
    const gpuMs = (estimateSeconds(defaultCost("A100"), 275, 4) * 1000) / SCALE;
    process.stdout.write(
      `per-call serving path (state in ${values["state-dir"] ?? tmpdir()}), ${hops.length} sequential calls (GPU time ${gpuMs.toFixed(3)} ms each at ${SCALE}x): ` +
        `P50 ${percentile(hops, 0.5).toFixed(2)} ms, P99 ${percentile(hops, 0.99).toFixed(2)} ms, max ${Math.max(...hops).toFixed(2)} ms\n` +
        `  of which (P50 / P99 ms): ${Object.entries(parts).map(([name, xs]) => `${name} ${percentile(xs, 0.5).toFixed(1)} / ${percentile(xs, 0.99).toFixed(1)}`).join(", ")}\n`,
    );
  } finally {
    await stack.stop();
  }
});
