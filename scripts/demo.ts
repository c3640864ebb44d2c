/**
 * `npm run demo`: submits synthetic CHESS workflows (Poisson arrivals) to a running `npm start`
 * stack, shows their progress (a bar on a terminal, a few lines elsewhere) and ends with a table of their
 * latencies against their SLOs. Times are the pool's (emulated) clock.
 */
import { parseArgs } from "node:util";
import { createRng, exponential } from "../src/core/rng";
import { percentile } from "../src/core/stats";
import { syntheticWorkflow } from "../src/sim/synthetic";
import { UsageError, numberArg, runCli } from "./lib/cli";
import { apiKeyFor } from "./lib/credentials";
import { progressBars } from "./lib/progress";
import { replayRequest, submitReplay, waitForAll, type WorkflowStatus } from "./lib/replay";
import { fmt, renderTable, type Column } from "./lib/summary-table";

runCli(async () => {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8787" },
      "api-key": { type: "string" },
      workflows: { type: "string" },
      rate: { type: "string" },
      "time-scale": { type: "string" },
      seed: { type: "string" },
    },
    strict: true,
  });
  const n = numberArg("workflows", values.workflows, 8, (x) => Number.isInteger(x) && x > 0 && x <= 500);
  const rate = numberArg("rate", values.rate, 0.2);
  const scale = numberArg("time-scale", values["time-scale"], 20);
  const rng = createRng(numberArg("seed", values.seed, 1, Number.isInteger));
  try {
    await fetch(`${values.url}/health`);
  } catch {
    throw new UsageError(`no hexflow at ${values.url}: run \`npm start\` first (or pass --url)`);
  }
  const gw = { url: values.url, apiKey: apiKeyFor(values.url, values["api-key"]) };
  process.stdout.write(`submitting ${n} synthetic workflows at ${rate}/s (pool clock) to ${values.url}\n`);
  const bars = progressBars();
  const bar = bars.run("demo", n);
  const ids: string[] = [];
  let done: Map<string, WorkflowStatus>;
  try {
    for (let i = 0; i < n; i++) {
      ids.push(await submitReplay(gw, replayRequest(syntheticWorkflow(rng))));
      bar.submitted();
      if (i < n - 1) await new Promise((r) => setTimeout(r, (exponential(rng, rate) / scale) * 1000));
    }
    done = await waitForAll(gw, ids, { pollMs: 500, timeoutMs: Number.POSITIVE_INFINITY, onEnd: () => bar.ended() });
    bar.done(`${[...done.values()].filter((w) => w.status === "succeeded").length}/${n} succeeded`);
  } finally {
    bars.stop();
  }
  process.stdout.write(demoTable(ids, done));
  const lat = [...done.values()].flatMap((w) => (w.latencyMs === null ? [] : [w.latencyMs / 1000]));
  const met = [...done.values()].filter((w) => w.sloMet === true).length;
  process.stdout.write(`latency s: p50 ${percentile(lat, 0.5).toFixed(1)}  p95 ${percentile(lat, 0.95).toFixed(1)}; SLO met ${met}/${ids.length}\n`);
});

/** One row per workflow, in submission order: how it ended, its latency against its SLO (pool-clock seconds). */
function demoTable(ids: readonly string[], done: ReadonlyMap<string, WorkflowStatus>): string {
  const columns: Column[] = [{ header: "workflow", align: "left" }, { header: "status", align: "left" }, { header: "calls" }, { header: "latency s" }, { header: "SLO s" }, { header: "SLO met", align: "left" }, { header: "error", align: "left" }];
  const rows = ids.map((id) => {
    const w = done.get(id);
    if (w === undefined) return [id, "not ended", null, null, null, null, ""];
    const met = w.sloMet === null ? "–" : w.sloMet ? "yes" : "no";
    const error = w.error === undefined ? "" : `${w.error.code}: ${w.error.message}`.slice(0, 60);
    return [id, w.status, w.stages.reduce((k, st) => k + st.calls.length, 0), w.latencyMs === null ? null : fmt.fixed(w.latencyMs / 1000, 1), w.sloMs === null ? null : fmt.fixed(w.sloMs / 1000, 0), met, error];
  });
  return renderTable(columns, rows, "Demo workflows (pool-clock seconds)");
}
