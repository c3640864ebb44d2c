/**
 * `npm run demo`: submits synthetic CHESS workflows (Poisson arrivals) to a running `npm start`
 * stack and prints their progress and latencies. Times are the pool's (emulated) clock.
 */
import { parseArgs } from "node:util";
import { createRng, exponential } from "../src/core/rng";
import { percentile } from "../src/core/stats";
import { syntheticWorkflow } from "../src/sim/synthetic";
import { UsageError, numberArg, runCli } from "./lib/cli";
import { apiKeyFor } from "./lib/credentials";
import { replayRequest, submitReplay, waitForAll } from "./lib/replay";

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
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await submitReplay(gw, replayRequest(syntheticWorkflow(rng))));
    process.stdout.write(`  submitted ${ids.at(-1) ?? ""}\n`);
    if (i < n - 1) await new Promise((r) => setTimeout(r, (exponential(rng, rate) / scale) * 1000));
  }
  const done = await waitForAll(gw, ids, {
    pollMs: 500,
    timeoutMs: Number.POSITIVE_INFINITY,
    onEnd: (w, ended) => {
      const lat = w.latencyMs === null ? "" : ` in ${(w.latencyMs / 1000).toFixed(1)} s (SLO ${((w.sloMs ?? 0) / 1000).toFixed(0)} s, ${w.sloMet ? "met" : "missed"})`;
      process.stdout.write(`  ${w.id} ${w.status}${lat}${w.error ? `: ${w.error.message}` : ""}  [${ended}/${ids.length}]\n`);
    },
  });
  const lat = [...done.values()].flatMap((w) => (w.latencyMs === null ? [] : [w.latencyMs / 1000]));
  const met = [...done.values()].filter((w) => w.sloMet === true).length;
  process.stdout.write(`latency s: p50 ${percentile(lat, 0.5).toFixed(1)}  p95 ${percentile(lat, 0.95).toFixed(1)}; SLO met ${met}/${ids.length}\n`);
});
