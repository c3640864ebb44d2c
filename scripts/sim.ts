/**
 * One simulated run: `npm run sim -- --policy hexgen --trace synthetic --rate 1 --json`.
 * `--help` lists the options.
 */
import { parseArgs } from "node:util";
import { POLICY_NAMES, getPolicy } from "../src/core/policies";
import { measureCapacity } from "../src/sim/capacity";
import { REFERENCE_POOL, buildInstances, parseCluster } from "../src/sim/cluster";
import { admissionMetrics, perSloClass } from "../src/sim/metrics";
import { runScenario, type Scenario } from "../src/sim/scenario";
import type { SloClass } from "../src/sim/workload";
import { tuneAlpha } from "../src/sim/tuner";
import { UsageError, listArg, loadTraceSource, numberArg, runCli } from "./lib/cli";

const HELP = `usage: npm run sim -- [options]
  --policy NAME        ${POLICY_NAMES.join(" | ")} (default hexgen)
  --trace PATH|synthetic  reference trace file, or the fitted generator (default synthetic)
  --cluster LIST       e.g. A100,A100,A6000,L40S or A100x3,L40Sx2 (default the reference pool)
  --rate QPS           Poisson arrivals per second (default 1)
  --rate-x K           K x this policy's measured capacity instead (measures it first: 3 seeds, slow)
  --workflows N        default: every trace entry once; 500 for synthetic
  --seed S             default 1
  --slo-scale K        SLO = K x base SLO (default 5)
  --slo-mix LIST       tenant classes "scale:share,...", e.g. 2:0.5,8:0.5 (per-class figures)
  --admission          workflow admission at arrival (core/workflow-admission): rejected ones do not run
  --best-effort        with --admission: rejected workflows run as best-effort instead
  --headroom H         with --admission: the predictor's headroom (default: the schema's)
  --alpha A|auto       wb policies only (default auto: tuned on other seeds of the same scenario)
  --engine vllm|parity default vllm
  --capacity           also measure capacity (bisection over the rate, 3 seeds)
  --json               print exactly one JSON object`;

runCli(() => {
  const { values } = parseArgs({
    options: {
      policy: { type: "string", default: "hexgen" },
      trace: { type: "string", default: "synthetic" },
      cluster: { type: "string" },
      rate: { type: "string" },
      workflows: { type: "string" },
      seed: { type: "string" },
      "slo-scale": { type: "string" },
      "rate-x": { type: "string" },
      "slo-mix": { type: "string" },
      admission: { type: "boolean", default: false },
      "best-effort": { type: "boolean", default: false },
      headroom: { type: "string" },
      alpha: { type: "string", default: "auto" },
      engine: { type: "string", default: "vllm" },
      capacity: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const policy = getPolicy(values.policy);
  if (policy === undefined) throw new UsageError(`unknown policy "${values.policy}" (known: ${POLICY_NAMES.join(", ")})`);
  if (values.engine !== "vllm" && values.engine !== "parity") throw new UsageError(`--engine must be vllm or parity (got "${values.engine}")`);
  const gpus = values.cluster === undefined ? { ok: true as const, value: [...REFERENCE_POOL] } : parseCluster(values.cluster);
  if (!gpus.ok) throw new UsageError(gpus.error);
  if (values.rate !== undefined && values["rate-x"] !== undefined) throw new UsageError("give --rate or --rate-x, not both");
  if (!values.admission && (values["best-effort"] || values.headroom !== undefined)) throw new UsageError("--best-effort and --headroom need --admission");
  const source = loadTraceSource(values.trace);
  const sloMix = values["slo-mix"] === undefined ? undefined : parseSloMix(values["slo-mix"]);
  const scenario: Scenario = {
    instances: buildInstances(gpus.value, values.engine),
    engine: values.engine,
    source,
    workflows: numberArg("workflows", values.workflows, source.kind === "trace" ? source.entries.length : 500, (n) => Number.isInteger(n) && n > 0),
    rate: numberArg("rate", values.rate, 1),
    sloScale: numberArg("slo-scale", values["slo-scale"], 5),
    ...(sloMix === undefined ? {} : { sloMix }),
  };
  const seed = numberArg("seed", values.seed, 1, (n) => Number.isInteger(n) && n >= 0);
  const fixedAlpha = values.alpha === "auto" ? undefined : numberArg("alpha", values.alpha, 0.5, (n) => n >= 0 && n <= 1);
  let baseCapacity: number | undefined;
  if (values["rate-x"] !== undefined) {
    const k = numberArg("rate-x", values["rate-x"], 1);
    baseCapacity = measureCapacity({ ...scenario, workflows: Math.max(scenario.workflows, 300) }, policy, {
      seeds: [seed, seed + 1, seed + 2],
      alpha: policy.tunesAlpha ? (fixedAlpha ?? "auto") : 0,
    }).capacity;
    if (baseCapacity <= 0) throw new UsageError("--rate-x: the measured capacity is 0, so no rate is a multiple of it");
    scenario.rate = k * baseCapacity;
  }
  let alpha: number | null = null;
  if (policy.tunesAlpha) {
    alpha =
      values.alpha === "auto"
        ? tuneAlpha(scenario, policy, { seeds: [seed + 1000, seed + 2000] }).alpha
        : numberArg("alpha", values.alpha, 0.5, (n) => n >= 0 && n <= 1);
  } else if (values.alpha !== "auto") {
    numberArg("alpha", values.alpha, 0.5, (n) => n >= 0 && n <= 1);
  }
  const admission = values.admission
    ? { config: values.headroom === undefined ? {} : { headroom: numberArg("headroom", values.headroom, 1.5, (n) => n >= 1) }, bestEffort: values["best-effort"] }
    : undefined;
  const t0 = performance.now();
  const run = runScenario(admission === undefined ? scenario : { ...scenario, admission }, policy, alpha ?? 0, seed);
  const simWallMs = performance.now() - t0;
  const capacity = values.capacity
    ? measureCapacity({ ...scenario, workflows: Math.max(scenario.workflows, 300) }, policy, {
        seeds: [seed, seed + 1, seed + 2],
        alpha: policy.tunesAlpha ? (values.alpha === "auto" ? "auto" : (alpha ?? 0)) : 0,
      }).capacity
    : undefined;
  const result = {
    policy: policy.name,
    alpha,
    cluster: gpus.value.join(","),
    engine: scenario.engine,
    trace: source.label,
    rate: scenario.rate,
    seed,
    workflows: run.output.workflows.length,
    sloScale: scenario.sloScale,
    baseSloS: run.baseSloS,
    latency: run.metrics.latency,
    attainment: run.metrics.attainment,
    throughput: run.metrics.throughput,
    calls: run.output.calls,
    simWallMs,
    ...(capacity === undefined ? {} : { capacity }),
    ...(baseCapacity === undefined ? {} : { rateX: scenario.rate / baseCapacity, measuredCapacity: baseCapacity }),
    ...(admission === undefined ? {} : { admission: admissionMetrics(run.output.workflows, run.output.rejected?.length ?? 0, run.sloS) }),
    ...(sloMix === undefined ? {} : { classes: perSloClass(run.output.workflows, run.sloS).map((c) => ({ ...c, sloScale: c.sloS / run.baseSloS })) }),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (n: number): string => n.toFixed(2);
  process.stdout.write(
    [
      `${result.policy} on ${result.cluster} (${result.engine} engine), ${result.trace}, ${result.workflows} workflows at ${result.rate}/s, seed ${seed}`,
      `alpha ${alpha === null ? "n/a" : alpha}  base SLO ${f(result.baseSloS)} s  SLO scale ${result.sloScale}`,
      `latency s: mean ${f(result.latency.mean)}  p50 ${f(result.latency.p50)}  p95 ${f(result.latency.p95)}  p99 ${f(result.latency.p99)}`,
      `attainment ${(100 * result.attainment).toFixed(1)}%  throughput ${result.throughput.toFixed(3)} wf/s  ${result.calls} calls in ${f(simWallMs)} ms`,
      ...(capacity === undefined ? [] : [`capacity ${capacity.toFixed(3)} wf/s at ${result.sloScale}x SLO`]),
      ...(baseCapacity === undefined ? [] : [`rate ${scenario.rate.toFixed(3)}/s = ${values["rate-x"]} x measured capacity ${baseCapacity.toFixed(3)} wf/s`]),
      ...(result.admission === undefined
        ? []
        : [
            `admission: ${result.admission.accepted} accepted, ${result.admission.bestEffort} best-effort, ${result.admission.rejected} rejected of ${result.admission.offered}`,
            `accepted attainment ${(100 * result.admission.acceptedAttainment).toFixed(1)}%  p95 ${f(result.admission.acceptedP95)} s  goodput ${result.admission.goodput.toFixed(3)} wf/s on time` +
              (result.admission.bestEffort > 0 ? `  best-effort attainment ${(100 * result.admission.bestEffortAttainment).toFixed(1)}%` : ""),
          ]),
      ...(result.classes ?? []).map((c) => `class SLO ${f(c.sloScale)}x: ${c.count} workflows  p50 ${f(c.latency.p50)}  p95 ${f(c.latency.p95)}  attainment ${(100 * c.attainment).toFixed(1)}%`),
    ].join("\n") + "\n",
  );
});

/** "2:0.5,8:0.5": SLO scale and share of each tenant class. */
function parseSloMix(raw: string): SloClass[] {
  const classes = listArg("slo-mix", raw).map((item) => {
    const [scale, share, extra] = item.split(":").map(Number);
    if (scale === undefined || share === undefined || extra !== undefined || !(scale > 0) || !(share > 0)) throw new UsageError(`--slo-mix wants scale:share pairs like 2:0.5,8:0.5 (got "${item}")`);
    return { scale, share };
  });
  return classes;
}
