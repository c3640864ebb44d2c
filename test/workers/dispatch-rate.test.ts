import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { driveDispatches, registerPool, type LoadStep } from "./dispatch-load";
import { fakeVllm } from "./helpers";

// The coordinator probes the registered instances every 2 s; answered, they stay healthy for a sweep longer than
// three probes (unanswered, every dispatch after ~4 s would fail fast with no_healthy_instance).
beforeEach(() => {
  fakeVllm();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

/** `npm run bench:dispatch` sets this binding to sweep rates; `npm test` runs one short step. */
const SWEEP = (env as unknown as { DISPATCH_SWEEP?: string }).DISPATCH_SWEEP === "1";
const RATES = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000];

describe("one CoordinatorObject under a rising dispatch rate", () => {
  it(
    SWEEP ? "sweeps the rate until latency bends" : "takes 400 stage dispatches in a second, losing none, and applies every batched load report",
    async () => {
      await registerPool("load");
      if (!SWEEP) {
        const s = await driveDispatches("load", 400, 1);
        expect(s.failed).toBe(0);
        expect(s.decisions).toBe(400);
        // Every batched start and finish report was applied: the pool's outstanding load is back to zero.
        // (No rate assertion: a shared CI machine makes timing noisy; `npm run bench:dispatch` measures.)
        const pool = await env.COORDINATOR.getByName("load").pool();
        expect(pool.instances.map((i) => [i.queued, i.running])).toEqual(pool.instances.map(() => [0, 0]));
        expect(pool.instances.every((i) => i.loadS === 0)).toBe(true);
        return;
      }
      const steps: LoadStep[] = [];
      for (const rate of RATES) {
        const s = await driveDispatches("load", rate, 2);
        steps.push(s);
        if (s.achieved < 0.9 * rate || s.p99Ms > 100) break;
      }
      const rows = steps.map((s) => `| ${s.offered} | ${s.achieved.toFixed(0)} | ${s.p50Ms} | ${s.p99Ms} | ${s.failed} |`);
      console.log(["| offered /s | achieved /s | P50 ms | P99 ms | failed |", "|---|---|---|---|---|", ...rows].join("\n"));
      expect(steps.every((s) => s.failed === 0)).toBe(true);
    },
    120_000,
  );
});
