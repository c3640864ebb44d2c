/**
 * GET /metrics end to end: real workflows through the gateway, their traces written by the objects' alarms,
 * then a scrape parsed by an independent Prometheus text-format parser.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { traceRows } from "../../src/core/trace-rows";
import { recordWorkflowTrace } from "../../src/db/traces";
import { insertDecision } from "../../src/db/tuning-decisions";
import { ADMIN, admin, api, fakeVllm, until, poolPerTest, TWO_GPU_POOL, HEAVY_REPLAY } from "./helpers";
import { TEST_KEY, TEST_TENANT_ID } from "./tenant-fixture";

const POOL = TWO_GPU_POOL;
const CALLS = HEAVY_REPLAY;

const ParsedSchema = z.array(
  z.object({
    name: z.string(),
    help: z.string(),
    type: z.enum(["COUNTER", "GAUGE", "HISTOGRAM", "SUMMARY", "UNTYPED"]),
    metrics: z.array(z.object({ labels: z.record(z.string(), z.string()).optional(), value: z.string().optional(), buckets: z.record(z.string(), z.string()).optional(), count: z.string().optional(), sum: z.string().optional() })),
  }),
);
type Parsed = z.infer<typeof ParsedSchema>;
type Metric = Parsed[number]["metrics"][number];

let lastText = "";

async function scrape(query = ""): Promise<Parsed> {
  const res = await api(`/metrics${query}`, { headers: ADMIN });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  lastText = await res.text();
  return ParsedSchema.parse(parsePrometheusTextFormat(lastText));
}

/**
 * A labelled histogram's series from the last scrape. The parser flattens a histogram family into one
 * unlabelled entry (its labels are lost), so the family's HELP and TYPE lines are left out and the same
 * parser reads `_bucket`, `_sum` and `_count` as untyped series with their labels.
 */
function histogramSeries(name: string): { bucket: Metric[]; sum: Metric[]; count: Metric[] } {
  const untyped = lastText.split("\n").filter((l) => !l.startsWith(`# TYPE ${name} `) && !l.startsWith(`# HELP ${name} `)).join("\n");
  const parsed = ParsedSchema.parse(parsePrometheusTextFormat(untyped));
  const of = (n: string): Metric[] => parsed.filter((f) => f.name === n).flatMap((f) => f.metrics);
  return { bucket: of(`${name}_bucket`), sum: of(`${name}_sum`), count: of(`${name}_count`) };
}

function family(p: Parsed, name: string, type: Parsed[number]["type"]): Metric[] {
  const f = p.find((x) => x.name === name);
  expect(f, name).toBeDefined();
  expect(f?.type, name).toBe(type);
  return f?.metrics ?? [];
}

const matching = (ms: readonly Metric[], labels: Record<string, string>): Metric[] => ms.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
const total = (ms: readonly Metric[]): number => ms.reduce((s, m) => s + Number(m.value), 0);

async function runWorkflow(): Promise<string> {
  const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json", prefer: "wait=10" }, body: JSON.stringify({ kind: "replay", calls: CALLS, sloMs: 200_000 }) });
  const v = (await res.json()) as { id: string; status: string };
  expect(v.status).toBe("succeeded");
  await runDurableObjectAlarm(env.WORKFLOW.getByName(v.id));
  await until(async () => (await env.TRACES.prepare("SELECT 1 AS one FROM workflow_traces WHERE workflow_id = ?").bind(v.id).first()) ?? undefined);
  return v.id;
}

poolPerTest(POOL);

describe("GET /metrics", () => {
  it("needs the admin credential: a tenant key or none is a 401 JSON error", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TEST_KEY}` }, { authorization: "Bearer wrong-token-0123456789" }];
    for (const headers of attempts) {
      const res = await api("/metrics", { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: "unauthorized" } });
    }
    expect((await api("/metrics?pool=Not%20A%20Pool", { headers: ADMIN })).status).toBe(400);
  });

  it("exposes workflow, instance, laxity, dispatch and α metrics that agree with what ran", async () => {
    let vllmCalls = 0;
    fakeVllm(() => (vllmCalls += 1));
    const ids = [await runWorkflow(), await runWorkflow(), await runWorkflow()];
    const p = await scrape();
    const wl = { tenant: TEST_TENANT_ID, kind: "replay", pool: "default" };

    expect(total(matching(family(p, "hexflow_workflows_ended_total", "COUNTER"), { ...wl, status: "succeeded" }))).toBe(ids.length);
    const slo = family(p, "hexflow_workflow_slo_total", "COUNTER");
    expect(total(matching(slo, { ...wl, outcome: "met" })) + total(matching(slo, { ...wl, outcome: "missed" }))).toBe(ids.length);

    family(p, "hexflow_workflow_latency_seconds", "HISTOGRAM");
    const latency = histogramSeries("hexflow_workflow_latency_seconds");
    // In the order served: le ascending, counts never falling, ending at +Inf = _count.
    const buckets = matching(latency.bucket, wl).map((m) => [Number(m.labels?.le === "+Inf" ? Infinity : m.labels?.le), Number(m.value)] as const);
    expect(buckets.length).toBeGreaterThan(5);
    for (let i = 1; i < buckets.length; i++) {
      expect(buckets[i]?.[0]).toBeGreaterThan(buckets[i - 1]?.[0] ?? Infinity);
      expect(buckets[i]?.[1]).toBeGreaterThanOrEqual(buckets[i - 1]?.[1] ?? Infinity);
    }
    expect(total(matching(latency.count, wl))).toBe(ids.length);
    expect(buckets.at(-1)).toEqual([Infinity, ids.length]);
    const latencies = await env.TRACES.prepare("SELECT sum(latency_s) AS s FROM workflow_traces").first<number>("s");
    expect(total(matching(latency.sum, wl))).toBeCloseTo(latencies ?? NaN, 6);

    family(p, "hexflow_call_laxity_at_admission_seconds", "HISTOGRAM");
    const laxity = histogramSeries("hexflow_call_laxity_at_admission_seconds");
    expect(total(laxity.count)).toBe(ids.length * CALLS.length);
    for (const m of laxity.count) expect(POOL.map((i) => i.gpu)).toContain(m.labels?.gpu);

    const dispatched = family(p, "hexflow_calls_dispatched_total", "COUNTER");
    expect(total(dispatched)).toBe(vllmCalls);
    expect(vllmCalls).toBe(ids.length * CALLS.length);
    for (const m of dispatched) expect(m.labels?.gpu).toBe(POOL.find((i) => i.id === m.labels?.instance)?.gpu);

    for (const name of ["hexflow_instance_queue_length", "hexflow_instance_running_calls", "hexflow_instance_outstanding_work_seconds"]) {
      const ms = family(p, name, "GAUGE");
      for (const i of POOL) expect(matching(ms, { pool: "default", instance: i.id, gpu: i.gpu }), `${name} ${i.id}`).toHaveLength(1);
    }
    const health = family(p, "hexflow_instance_health", "GAUGE");
    for (const i of POOL) {
      const states = matching(health, { pool: "default", instance: i.id });
      expect(states.map((m) => m.labels?.state).sort()).toEqual(["healthy", "probation", "unhealthy"]);
      expect(total(states)).toBe(1);
    }

    expect(total(matching(family(p, "hexflow_pool_up", "GAUGE"), { pool: "default" }))).toBe(1);
    const view = (await (await admin("/pools/default", "GET")).json()) as { alpha: number; alphaVersion: number };
    expect(total(family(p, "hexflow_pool_alpha", "GAUGE"))).toBe(view.alpha);
    expect(total(family(p, "hexflow_pool_alpha_version", "GAUGE"))).toBe(view.alphaVersion);
    expect((await admin("/pools/default/policy", "PUT", { alpha: 0.35 })).status).toBe(200);
    const after = await scrape();
    expect(total(family(after, "hexflow_pool_alpha", "GAUGE"))).toBe(0.35);
    expect(total(family(after, "hexflow_pool_alpha_version", "GAUGE"))).toBe(view.alphaVersion + 1);
  });

  it("counts a workflow once when its alarm writes the trace batch again", async () => {
    fakeVllm();
    const id = await runWorkflow();
    const before = await scrape();
    const stub = env.WORKFLOW.getByName(id);
    // As if the first batch committed but its answer was lost: the trace is still owed, so the alarm runs the batch again.
    await runInDurableObject(stub, (_obj, state) => {
      state.storage.sql.exec("UPDATE meta SET json = ? WHERE key = 'trace'", JSON.stringify({ traced: false, attempts: 1, sampled: true, released: true }));
    });
    await runInDurableObject(stub, (obj) => obj.alarm());
    const state = await runInDurableObject(stub, (_obj, s) => s.storage.sql.exec<{ json: string }>("SELECT json FROM meta WHERE key = 'trace'").one().json);
    expect(JSON.parse(state)).toMatchObject({ traced: true, attempts: 2 });
    // And the same rows written directly once more.
    const row = await env.TRACES.prepare("SELECT * FROM workflow_traces WHERE workflow_id = ?").bind(id).first();
    expect(row).not.toBeNull();
    const after = await scrape();
    for (const name of ["hexflow_workflows_ended_total", "hexflow_workflow_slo_total", "hexflow_calls_dispatched_total"]) {
      expect(total(family(after, name, "COUNTER")), name).toBe(total(family(before, name, "COUNTER")));
    }
    family(after, "hexflow_workflow_latency_seconds", "HISTOGRAM");
    expect(total(histogramSeries("hexflow_workflow_latency_seconds").count)).toBe(1);
    expect(total(histogramSeries("hexflow_call_laxity_at_admission_seconds").count)).toBe(CALLS.length);
    expect(total(family(after, "hexflow_workflows_ended_total", "COUNTER"))).toBe(1);
  });

  it("escapes odd label values so they parse back unchanged, and counts tuning decisions", async () => {
    const tenant = 'we"ird\\ten\nant, x="1"}';
    const rows = traceRows({ id: "wf_odd", kind: "dag", status: "failed", pool: "default", arrivalS: 0, sloS: 10, createdAtMs: 1 }, [], { tenant, policy: null, gpuOf: () => null, nowMs: 1 });
    await recordWorkflowTrace(env.TRACES, rows);
    await recordWorkflowTrace(env.TRACES, rows);
    const decision = { pool: "default", atMs: 1, reason: "manual", windowStartS: null, windowEndS: null, workflows: 0, arrivalRate: null, currentAlpha: 0.7, bestAlpha: null, gain: null, installed: false, alphaVersion: null, skipped: "too few workflows", curve: [], cpuMs: null };
    expect(await insertDecision(env.TRACES, decision)).toBeGreaterThan(0);
    await insertDecision(env.TRACES, { ...decision, reason: "cron", installed: true, alphaVersion: 2 });
    await insertDecision(env.TRACES, decision);
    const p = await scrape();
    expect(matching(family(p, "hexflow_workflows_ended_total", "COUNTER"), { tenant, status: "failed" }).map((m) => m.value)).toEqual(["1"]);
    const tuning = family(p, "hexflow_tuning_decisions_total", "COUNTER");
    expect(total(matching(tuning, { pool: "default", reason: "manual", installed: "false" }))).toBe(2);
    expect(total(matching(tuning, { pool: "default", reason: "cron", installed: "true" }))).toBe(1);
  });

  it("backfills the tuning decisions recorded before the migration, with the labels spelled as new ones are", async () => {
    const decision = { pool: "default", atMs: 1, reason: "cron", windowStartS: null, windowEndS: null, workflows: 0, arrivalRate: null, currentAlpha: 0.7, bestAlpha: null, gain: null, installed: true, alphaVersion: 2, skipped: null, curve: [], cpuMs: null };
    await insertDecision(env.TRACES, decision);
    await insertDecision(env.TRACES, { ...decision, installed: false });
    await env.TRACES.exec("DELETE FROM metric_counters");
    const migrations = z.array(z.object({ name: z.string(), queries: z.array(z.string()) })).parse(Reflect.get(env, "TEST_MIGRATIONS"));
    const backfill = migrations.flatMap((m) => m.queries).find((q) => q.includes("'hexflow_tuning_decisions_total'"));
    expect(backfill).toBeDefined();
    await env.TRACES.prepare(backfill ?? "").run();
    // A decision after the migration adds to the backfilled row, not a second spelling of it.
    await insertDecision(env.TRACES, decision);
    const tuning = family(await scrape(), "hexflow_tuning_decisions_total", "COUNTER");
    expect(tuning.map((m) => [m.labels, m.value])).toEqual([
      [{ installed: "false", pool: "default", reason: "cron" }, "1"],
      [{ installed: "true", pool: "default", reason: "cron" }, "2"],
    ]);
  });

  it("keeps scraping when a pool's coordinator fails: that pool is down, the others are whole; ?pool= restricts", async () => {
    expect((await admin("/pools/broken/instances", "POST", { ...POOL[0], id: "b-0" })).status).toBe(201);
    // A coordinator whose stored settings no longer parse: every pool() call throws.
    await runInDurableObject(env.COORDINATOR.getByName("broken"), (_obj, state) => {
      state.storage.sql.exec("UPDATE settings SET value = '{\"pool\":1}' WHERE key = 'pool'");
    });
    const p = await scrape();
    const up = family(p, "hexflow_pool_up", "GAUGE");
    expect(matching(up, { pool: "broken" }).map((m) => m.value)).toEqual(["0"]);
    expect(matching(up, { pool: "default" }).map((m) => m.value)).toEqual(["1"]);
    expect(matching(family(p, "hexflow_instance_queue_length", "GAUGE"), { pool: "broken" })).toEqual([]);
    expect(matching(family(p, "hexflow_instance_queue_length", "GAUGE"), { pool: "default" })).toHaveLength(POOL.length);
    const only = await scrape("?pool=default");
    expect(family(only, "hexflow_pool_up", "GAUGE").map((m) => m.labels?.pool)).toEqual(["default"]);
  });
});
