import { describe, expect, it } from "vitest";
import { canonicalLabels, LATENCY_BUCKETS_S, mergeIncrements, METRIC, tuningIncrement, workflowIncrements, type CounterIncrement } from "../../src/core/metric-increments";
import { metricFamilies, type StoredCounter } from "../../src/core/metrics-catalog";
import { formatValue, renderPrometheus } from "../../src/core/prometheus-text";
import { traceRows, type TraceCallInput, type TraceMetaInput } from "../../src/core/trace-rows";

const META: TraceMetaInput = { id: "wf_1", kind: "replay", status: "succeeded", pool: "p", arrivalS: 100, sloS: 30, finishedAt: 107, createdAtMs: 1 };
const base = { step: "x", inputTokens: 10, budgetS: 5, alphaVersion: 1, releasedAt: 100, enqueuedAt: 100, admittedAt: 101, finishedAt: 102, completionTokens: 3, deadlineS: 110 };
const CALLS: TraceCallInput[] = [
  { ...base, id: "wf_1:0:0", stageIndex: 0, instanceId: "a" },
  { ...base, id: "wf_1:1:0", stageIndex: 1, instanceId: "a" },
  { ...base, id: "wf_1:1:1", stageIndex: 1, instanceId: "b" },
  { ...base, id: "wf_1:2:0", stageIndex: 2, instanceId: "b", finishedAt: undefined, completionTokens: undefined, error: "boom" },
];
const EXTRA = { tenant: "t", policy: "hexgen", gpuOf: (id: string) => (id === "a" ? "A100" : null), nowMs: 2 };
const LAXITY = new Map([["wf_1:0:0", 3], ["wf_1:1:0", -2], ["wf_1:1:1", 700], ["wf_1:2:0", 0]]);

const find = (incs: readonly CounterIncrement[], name: string, labels: Record<string, string>): number | undefined =>
  incs.find((i) => i.name === name && canonicalLabels(i.labels) === canonicalLabels(labels))?.value;

/** What the counters table would hold after applying increments (the upsert adds). */
function applied(...batches: CounterIncrement[][]): StoredCounter[] {
  return mergeIncrements(batches.flat()).map((i) => ({ name: i.name, labels: i.labels, value: i.value }));
}

describe("workflowIncrements", () => {
  const incs = workflowIncrements(traceRows(META, CALLS, EXTRA), LAXITY);
  const wl = { tenant: "t", kind: "replay", pool: "p" };

  it("counts the end, the SLO outcome and the latency in cumulative buckets", () => {
    expect(find(incs, METRIC.workflowsEnded, { ...wl, status: "succeeded" })).toBe(1);
    expect(find(incs, METRIC.workflowSlo, { ...wl, outcome: "met" })).toBe(1);
    // latency 7 s: every bound from 10 up counts it, 5 and below do not.
    expect(find(incs, `${METRIC.workflowLatency}_bucket`, { ...wl, le: "5" })).toBeUndefined();
    for (const b of LATENCY_BUCKETS_S.filter((x) => x >= 10)) expect(find(incs, `${METRIC.workflowLatency}_bucket`, { ...wl, le: String(b) })).toBe(1);
    expect(find(incs, `${METRIC.workflowLatency}_bucket`, { ...wl, le: "+Inf" })).toBe(1);
    expect(find(incs, `${METRIC.workflowLatency}_sum`, wl)).toBe(7);
    expect(find(incs, `${METRIC.workflowLatency}_count`, wl)).toBe(1);
  });

  it("counts every call on its instance, and laxity only for calls that finished without error", () => {
    expect(find(incs, METRIC.dispatched, { pool: "p", instance: "a", gpu: "A100" })).toBe(2);
    expect(find(incs, METRIC.dispatched, { pool: "p", instance: "b", gpu: "unknown" })).toBe(2);
    expect(find(incs, `${METRIC.laxity}_count`, { pool: "p", gpu: "A100" })).toBe(2);
    expect(find(incs, `${METRIC.laxity}_sum`, { pool: "p", gpu: "A100" })).toBe(1);
    expect(find(incs, `${METRIC.laxity}_bucket`, { pool: "p", gpu: "A100", le: "-1" })).toBe(1);
    expect(find(incs, `${METRIC.laxity}_bucket`, { pool: "p", gpu: "A100", le: "-10" })).toBeUndefined();
    // 700 s is above every bound: +Inf only; the failed call on b is not observed.
    expect(find(incs, `${METRIC.laxity}_count`, { pool: "p", gpu: "unknown" })).toBe(1);
    expect(find(incs, `${METRIC.laxity}_bucket`, { pool: "p", gpu: "unknown", le: "600" })).toBeUndefined();
    expect(find(incs, `${METRIC.laxity}_bucket`, { pool: "p", gpu: "unknown", le: "+Inf" })).toBe(1);
  });

  it("observes no latency or SLO for a failed or cancelled workflow, and a missed SLO when late", () => {
    const failed = workflowIncrements(traceRows({ ...META, status: "failed" }, CALLS, EXTRA), LAXITY);
    expect(find(failed, METRIC.workflowsEnded, { ...wl, status: "failed" })).toBe(1);
    expect(failed.some((i) => i.name === METRIC.workflowSlo || i.name.startsWith(METRIC.workflowLatency))).toBe(false);
    const late = workflowIncrements(traceRows({ ...META, finishedAt: 200 }, CALLS, EXTRA), LAXITY);
    expect(find(late, METRIC.workflowSlo, { ...wl, outcome: "missed" })).toBe(1);
  });

  it("yields each (name, labels) once", () => {
    const keys = incs.map((i) => `${i.name} ${canonicalLabels(i.labels)}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("metricFamilies and the text format", () => {
  it("renders stored cumulative buckets with zeros filled, and _count equal to +Inf", () => {
    const one = workflowIncrements(traceRows(META, CALLS, EXTRA), LAXITY);
    const two = workflowIncrements(traceRows({ ...META, id: "wf_2", finishedAt: 100.2 }, [], EXTRA), new Map());
    const families = metricFamilies(applied(one, two, [tuningIncrement({ pool: "p", reason: "cron", installed: true })]), []);
    const latency = families.find((f) => f.name === METRIC.workflowLatency);
    expect(latency?.type).toBe("histogram");
    const buckets = (latency?.samples ?? []).filter((s) => s.name.endsWith("_bucket"));
    expect(buckets.map((s) => s.labels.le)).toEqual([...LATENCY_BUCKETS_S.map(String), "+Inf"]);
    expect(buckets.map((s) => s.value)).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect(latency?.samples.find((s) => s.name.endsWith("_count"))?.value).toBe(2);
    expect(families.find((f) => f.name === METRIC.tuningDecisions)?.samples).toEqual([{ name: METRIC.tuningDecisions, labels: { installed: "true", pool: "p", reason: "cron" }, value: 1 }]);
  });

  it("gives an unreachable pool up 0 and no live gauges, a reachable one a health state set", () => {
    const families = metricFamilies([], [
      { pool: "down", up: false },
      { pool: "p", up: true, alpha: 0.7, alphaVersion: 3, instances: [{ id: "a", gpu: "A100", queued: 2, running: 1, loadS: 4.5, health: "probation" }] },
    ]);
    const text = renderPrometheus(families);
    expect(text).toContain('hexflow_pool_up{pool="down"} 0\n');
    expect(text).toContain('hexflow_pool_up{pool="p"} 1\n');
    expect(text).not.toContain('hexflow_pool_alpha{pool="down"}');
    expect(text).toContain('hexflow_pool_alpha_version{pool="p"} 3\n');
    expect(text).toContain('hexflow_instance_outstanding_work_seconds{pool="p",instance="a",gpu="A100"} 4.5\n');
    expect(text).toContain('hexflow_instance_health{pool="p",instance="a",gpu="A100",state="probation"} 1\n');
    expect(text).toContain('hexflow_instance_health{pool="p",instance="a",gpu="A100",state="healthy"} 0\n');
    expect(text).toContain("# TYPE hexflow_workflows_ended_total counter\n");
  });

  it("escapes label values and help text, and spells special values as Prometheus does", () => {
    const text = renderPrometheus([{ name: "x_total", type: "counter", help: "a \\ b\nc", samples: [{ name: "x_total", labels: { t: 'q"\\\n' }, value: 2 }] }]);
    expect(text).toBe('# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\nx_total{t="q\\"\\\\\\n"} 2\n');
    expect([Infinity, -Infinity, NaN, 0.25].map(formatValue)).toEqual(["+Inf", "-Inf", "NaN", "0.25"]);
    expect(() => renderPrometheus([{ name: "bad-name", type: "gauge", help: "", samples: [] }])).toThrow();
  });
});
