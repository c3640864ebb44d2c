/**
 * The end-to-end benchmark's load generator, a process of its own so its timers and sockets do not
 * share an event loop with the stack it measures. Open loop: workflow i is submitted at its Poisson
 * arrival time (pool clock / time scale), whether or not earlier submissions have answered, so a
 * slow gateway shows up as latency instead of silently thinning the load. Localhost only, bounded
 * in count and in time.
 *
 * Prints one JSON object per line: `submitted`, `ended`, then one `result` with every workflow.
 * `npm run loadgen -- --url http://127.0.0.1:8787 --rate 0.5 --workflows 40 --time-scale 10`;
 * `--change-at K --rate-factor F` multiplies the rate by F from workflow K on (a traffic change mid-run).
 */
import { parseArgs } from "node:util";
import { buildWorkload, withRateChange } from "../src/sim/workload";
import { loadTraceSource, localOrigin, numberArg, runCli } from "./lib/cli";
import { apiKeyFor } from "./lib/credentials";
import { SubmitError, TERMINAL, getWorkflow, replayRequest, submitReplay, type WorkflowStatus } from "./lib/replay";
import type { LoadgenEvent, LoadgenWorkflow } from "./lib/loadgen-events";

runCli(async () => {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8787" },
      "api-key": { type: "string" },
      trace: { type: "string", default: "synthetic" },
      rate: { type: "string" },
      workflows: { type: "string" },
      seed: { type: "string" },
      "time-scale": { type: "string" },
      "slo-ms": { type: "string" },
      "timeout-s": { type: "string" },
      "poll-ms": { type: "string" },
      "change-at": { type: "string" },
      "rate-factor": { type: "string" },
    },
    strict: true,
  });
  const url = localOrigin(values.url);
  const base = { url, apiKey: apiKeyFor(url, values["api-key"]) };
  const source = loadTraceSource(values.trace);
  const n = numberArg("workflows", values.workflows, 40, (x) => Number.isInteger(x) && x > 0 && x <= 5000);
  const rate = numberArg("rate", values.rate, 0.5);
  const seed = numberArg("seed", values.seed, 1, (x) => Number.isInteger(x) && x >= 0);
  const scale = numberArg("time-scale", values["time-scale"], 10);
  const sloMs = values["slo-ms"] === undefined ? undefined : numberArg("slo-ms", values["slo-ms"], 0);
  const timeoutMs = numberArg("timeout-s", values["timeout-s"], 1800, (x) => x > 0 && x <= 86_400) * 1000;
  const pollMs = numberArg("poll-ms", values["poll-ms"], 1000, (x) => x >= 10);

  const emit = (e: LoadgenEvent): void => {
    process.stdout.write(`${JSON.stringify(e)}\n`);
  };
  const changeAt = numberArg("change-at", values["change-at"], n, (x) => Number.isInteger(x) && x >= 0 && x <= n);
  const factor = numberArg("rate-factor", values["rate-factor"], 1);
  const workload = withRateChange(buildWorkload(source, n, rate, seed), changeAt, factor);
  const ids: (string | undefined)[] = new Array<string | undefined>(n);
  const rejected = new Map<number, string>();
  const rejectCodes = new Map<number, string>();
  const ended = new Map<number, WorkflowStatus>();
  const t0 = performance.now();
  const deadline = t0 + timeoutMs;

  const submissions = workload.map(async (item, i) => {
    const due = t0 + (item.arrivalS / scale) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    if (performance.now() > deadline) {
      rejected.set(i, "not submitted: the run's time bound passed");
      return;
    }
    try {
      const id = await submitReplay(base, replayRequest(item.spec, sloMs));
      ids[i] = id;
      emit({ type: "submitted", index: i, id, lateMs: performance.now() - due });
    } catch (e) {
      rejected.set(i, e instanceof Error ? e.message : String(e));
      const code = e instanceof SubmitError ? e.code : null;
      if (code !== null) rejectCodes.set(i, code);
      emit({ type: "rejected", index: i, message: rejected.get(i) ?? "", code });
    }
  });
  let submittedAll = false;
  void Promise.all(submissions).then(() => {
    submittedAll = true;
  });

  // Poll the unfinished ones, one request at a time, so polling adds little load to what it measures.
  while (performance.now() < deadline) {
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      if (id === undefined || ended.has(i)) continue;
      // A poll that fails (a dropped connection, a gateway restarting) is tried again next round: it says
      // nothing about the workflow, which the gateway accepted and keeps.
      const w = await getWorkflow(base, id).catch(() => undefined);
      if (w === undefined || !TERMINAL.has(w.status)) continue;
      ended.set(i, w);
      emit({ type: "ended", index: i, id, status: w.status });
    }
    if (submittedAll && ended.size + rejected.size === n) break;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  const workflows: LoadgenWorkflow[] = workload.map((item, i) => {
    const w = ended.get(i);
    return {
      index: i,
      id: ids[i] ?? null,
      arrivalS: item.arrivalS,
      status: w?.status ?? (rejected.has(i) ? "rejected" : "unfinished"),
      createdAtMs: w === undefined ? null : Date.parse(w.createdAt),
      latencyMs: w?.latencyMs ?? null,
      sloMs: w?.sloMs ?? null,
      calls: w?.stages.reduce((k, s) => k + s.calls.length, 0) ?? 0,
      error: w?.error?.message ?? rejected.get(i) ?? null,
      rejectCode: rejectCodes.get(i) ?? null,
      bestEffort: w?.bestEffort === true,
    };
  });
  emit({ type: "result", wallMs: performance.now() - t0, workflows });
  // Workflows still running when the bound passed are reported, not waited for.
  process.exit(0);
});
