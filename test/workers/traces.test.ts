import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { MAX_TRACE_ATTEMPTS, traceRows, type CallTraceRow, type WorkflowTraceRow } from "../../src/core/trace-rows";
import { pruneTraces, recordWorkflowTrace } from "../../src/db/traces";
import { parseTrace } from "../../src/sim/trace";
import { ADMIN, admin, api, fakeVllm, until, poolPerTest, TWO_GPU_POOL, HEAVY_REPLAY } from "./helpers";
import { TEST_TENANT_ID } from "./tenant-fixture";

const POOL = TWO_GPU_POOL;
const CALLS = HEAVY_REPLAY;

async function runWorkflow(sloMs = 200_000): Promise<string> {
  const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json", prefer: "wait=10" }, body: JSON.stringify({ kind: "replay", calls: CALLS, sloMs }) });
  const v = (await res.json()) as { id: string; status: string };
  expect(v.status).toBe("succeeded");
  return v.id;
}

async function tracedRows(id: string): Promise<{ workflow: WorkflowTraceRow; calls: CallTraceRow[] }> {
  const stub = env.WORKFLOW.getByName(id);
  // The alarm set at the end may already have run by itself; running it again must be harmless.
  await runDurableObjectAlarm(stub);
  const workflow = await until(async () => (await env.TRACES.prepare("SELECT * FROM workflow_traces WHERE workflow_id = ?").bind(id).first<WorkflowTraceRow>()) ?? undefined);
  const calls = await env.TRACES.prepare("SELECT * FROM call_traces WHERE workflow_id = ? ORDER BY stage_index, call_id").bind(id).all<CallTraceRow>();
  return { workflow, calls: calls.results };
}

async function count(table: "workflow_traces" | "call_traces"): Promise<number> {
  return (await env.TRACES.prepare(`SELECT count(*) AS n FROM ${table}`).first<number>("n")) ?? 0;
}

poolPerTest(POOL);

describe("traces of finished workflows in D1", () => {
  it("records the workflow and each call from the object's alarm, once", async () => {
    fakeVllm();
    const id = await runWorkflow();
    const { workflow, calls } = await tracedRows(id);
    expect(workflow).toMatchObject({ workflow_id: id, tenant: TEST_TENANT_ID, pool: "default", kind: "replay", status: "succeeded", slo_s: 200, slo_met: 1, policy: "hexgen", alpha_version: 1, error_code: null });
    expect(workflow.latency_s).toBeGreaterThan(0);
    expect(workflow.latency_s).toBeCloseTo((workflow.finished_s ?? 0) - workflow.arrival_s, 6);
    expect(workflow.created_at_ms).toBeGreaterThan(0);
    expect(calls.map((c) => [c.stage_index, c.step, c.input_tokens, c.output_tokens])).toEqual(CALLS.map((c, i) => [i === 0 ? 0 : i === 3 ? 2 : 1, c.step, c.inputTokens, c.outputTokens]));
    for (const c of calls) {
      expect(c.gpu).toBe(c.instance_id === "a100-0" ? "A100" : "L40S");
      expect(c.enqueued_s).not.toBeNull();
      expect(c.admitted_s ?? 0).toBeGreaterThanOrEqual(c.enqueued_s ?? Infinity);
      expect(c.finished_s ?? 0).toBeGreaterThanOrEqual(c.admitted_s ?? Infinity);
      expect(c.met).toBe(1);
      expect(c.alpha_version).toBe(1);
      expect(c.deadline_s).toBeCloseTo(c.released_s + c.budget_s, 6);
    }

    // The handler run again (and a second alarm) writes nothing new.
    const stub = env.WORKFLOW.getByName(id);
    await runInDurableObject(stub, (obj) => obj.alarm());
    await runDurableObjectAlarm(stub);
    expect(await count("workflow_traces")).toBe(1);
    expect(await count("call_traces")).toBe(CALLS.length);
    const again = await env.TRACES.prepare("SELECT recorded_at_ms FROM workflow_traces WHERE workflow_id = ?").bind(id).first<number>("recorded_at_ms");
    expect(again).toBe(workflow.recorded_at_ms);
  });

  it("records a cancelled workflow without a latency or SLO verdict", async () => {
    // vLLM never answers, so the calls stay in flight until the cancel.
    vi.spyOn(globalThis, "fetch").mockImplementation(() => new Promise<Response>(() => {}));
    const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ kind: "replay", calls: CALLS }) });
    const { id } = (await res.json()) as { id: string };
    expect((await api(`/v1/workflows/${id}`, { method: "DELETE" })).status).toBe(200);
    const { workflow, calls } = await tracedRows(id);
    expect(workflow).toMatchObject({ status: "cancelled", latency_s: null, slo_met: null, finished_s: null });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ finished_s: null, met: null, output_tokens: null });
  });

  it("retries a failed D1 write on the next alarm, atomically, and gives up after the cap", async () => {
    fakeVllm();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    // With the calls table gone, the batch fails as a whole: no workflow row without its calls.
    await env.TRACES.exec("ALTER TABLE call_traces RENAME TO call_traces_away");
    const id = await runWorkflow();
    const stub = env.WORKFLOW.getByName(id);
    await expect(runInDurableObject(stub, (obj) => obj.alarm())).rejects.toThrow();
    expect(await count("workflow_traces")).toBe(0);
    await env.TRACES.exec("ALTER TABLE call_traces_away RENAME TO call_traces");
    await runInDurableObject(stub, (obj) => obj.alarm());
    expect(await count("workflow_traces")).toBe(1);
    expect(await count("call_traces")).toBe(CALLS.length);

    // A trace that failed MAX_TRACE_ATTEMPTS times is given up with a log line, not retried forever.
    const other = await runWorkflow();
    // Its own alarm writes the trace first; waiting for that keeps it from landing after the DELETE below.
    await tracedRows(other);
    const stub2 = env.WORKFLOW.getByName(other);
    await runInDurableObject(stub2, (_obj, state) => {
      state.storage.sql.exec("UPDATE meta SET json = ? WHERE key = 'trace'", JSON.stringify({ traced: false, attempts: MAX_TRACE_ATTEMPTS }));
    });
    await env.TRACES.prepare("DELETE FROM workflow_traces WHERE workflow_id = ?").bind(other).run();
    await runInDurableObject(stub2, (obj) => obj.alarm());
    expect(await env.TRACES.prepare("SELECT count(*) AS n FROM workflow_traces WHERE workflow_id = ?").bind(other).first<number>("n")).toBe(0);
    expect(errors.mock.calls.some((c) => String(c[0]).includes(`workflow ${other}: trace not written`))).toBe(true);
  });

  it("exports a window in the reference trace format, with the arrivals beside it", async () => {
    fakeVllm();
    const ids = [await runWorkflow(), await runWorkflow()];
    for (const id of ids) await tracedRows(id);
    const res = await api(`/admin/traces?pool=default&from=0&to=${Date.now() + 60_000}`, { headers: ADMIN });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { workflows: number; skipped: number; truncated: boolean; trace: unknown[]; arrivals_s: number[]; workflow_ids: string[] };
    expect(body).toMatchObject({ workflows: 2, skipped: 0, truncated: false });
    expect(body.workflow_ids.sort()).toEqual([...ids].sort());
    expect(body.arrivals_s[0]).toBe(0);
    expect(body.arrivals_s[1]).toBeGreaterThanOrEqual(0);
    const parsed = parseTrace(JSON.stringify(body.trace), "export.json");
    if (!parsed.ok) throw new Error(parsed.error);
    for (const entry of parsed.value) {
      expect(entry.Text2SQLRequest).toEqual(CALLS.map((c) => ({ step: c.step, input_length: c.inputTokens, output_length: c.outputTokens })));
    }

    const iso = await api(`/admin/traces?from=${new Date(0).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}&format=rows`, { headers: ADMIN });
    const rows = (await iso.json()) as { workflows: WorkflowTraceRow[]; calls: CallTraceRow[] };
    expect(rows.workflows).toHaveLength(2);
    expect(rows.calls).toHaveLength(2 * CALLS.length);
    const empty = (await (await api(`/admin/traces?pool=other&from=0&to=${Date.now() + 60_000}`, { headers: ADMIN })).json()) as { trace: unknown[] };
    expect(empty.trace).toEqual([]);
  });

  it("exports a tenant's own traces at /v1/traces, and none of another tenant's", async () => {
    fakeVllm();
    const mine = await runWorkflow();
    const created = await admin("/tenants", "POST", { name: "other" });
    const { key } = (await created.json()) as { key: string };
    const res = await api("/v1/workflows", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", prefer: "wait=10" }, body: JSON.stringify({ kind: "replay", calls: CALLS, sloMs: 200_000 }) });
    const theirs = ((await res.json()) as { id: string }).id;
    for (const id of [mine, theirs]) await tracedRows(id);
    const window = `pool=default&from=0&to=${Date.now() + 60_000}&format=rows`;
    const own = (await (await api(`/v1/traces?${window}`)).json()) as { workflows: WorkflowTraceRow[]; calls: CallTraceRow[] };
    expect(own.workflows.map((w) => w.workflow_id)).toEqual([mine]);
    expect(new Set(own.calls.map((c) => c.workflow_id))).toEqual(new Set([mine]));
    const other = (await (await api(`/v1/traces?${window}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { workflows: WorkflowTraceRow[] };
    expect(other.workflows.map((w) => w.workflow_id)).toEqual([theirs]);
    // The admin's export has both.
    const all = (await (await api(`/admin/traces?${window}`, { headers: ADMIN })).json()) as { workflows: WorkflowTraceRow[] };
    expect(all.workflows.map((w) => w.workflow_id).sort()).toEqual([mine, theirs].sort());
  });

  it("guards the export with the admin credential and validates its window", async () => {
    const anon = await api("/admin/traces?from=0&to=1");
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ error: { code: "unauthorized" } });
    for (const q of ["from=0", "from=yesterday&to=1", "from=5&to=1", "from=0&to=1&format=csv", "from=0&to=1&limit=0"]) {
      const res = await api(`/admin/traces?${q}`, { headers: ADMIN });
      expect(res.status, q).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_request" } });
    }
  });
});

describe("pruning", () => {
  /** A workflow of two calls recorded at `atMs`. */
  async function seed(id: string, atMs: number): Promise<void> {
    const call = { stageIndex: 0, step: "s", inputTokens: 10, instanceId: "a100-0", budgetS: 5, deadlineS: 5, alphaVersion: 1, releasedAt: 0, finishedAt: 1, completionTokens: 3 };
    const rows = traceRows(
      { id, kind: "replay", status: "succeeded", pool: "default", arrivalS: 0, sloS: 10, finishedAt: 1, createdAtMs: atMs },
      [{ ...call, id: `${id}:0:0` }, { ...call, id: `${id}:0:1` }],
      { tenant: "default", policy: "hexgen", gpuOf: () => "A100", nowMs: atMs },
    );
    await recordWorkflowTrace(env.TRACES, rows);
  }

  it("writes a workflow of many calls in one batch of four statements (metric counters, pool, workflow, calls)", async () => {
    const batch = vi.spyOn(env.TRACES, "batch");
    const call = { stageIndex: 0, step: "s", inputTokens: 10, instanceId: "a100-0", budgetS: 5, deadlineS: 5, alphaVersion: 1, releasedAt: 0 };
    const calls = Array.from({ length: 150 }, (_, i) => ({ ...call, id: `wf_big:0:${i}` }));
    await recordWorkflowTrace(env.TRACES, traceRows({ id: "wf_big", kind: "dag", status: "failed", pool: "default", arrivalS: 0, sloS: 10, createdAtMs: 1 }, calls, { tenant: "default", policy: null, gpuOf: () => null, nowMs: 1 }));
    expect(batch).toHaveBeenCalledTimes(1);
    expect(batch.mock.calls[0]?.[0]).toHaveLength(4);
    expect(await count("call_traces")).toBe(150);
  });

  it("deletes rows older than the maximum age, with their calls", async () => {
    for (let i = 0; i < 5; i++) await seed(`wf_${i}`, 1_000 * i);
    const r = await pruneTraces(env.TRACES, { maxAgeMs: 3_500, maxRows: 100, nowMs: 5_000 });
    expect(r).toEqual({ workflows: 2, calls: 4 });
    const left = await env.TRACES.prepare("SELECT workflow_id FROM workflow_traces ORDER BY workflow_id").all<{ workflow_id: string }>();
    expect(left.results.map((w) => w.workflow_id)).toEqual(["wf_2", "wf_3", "wf_4"]);
    expect(await count("call_traces")).toBe(6);
  });

  it("keeps at most maxRows workflows, the newest, with their calls", async () => {
    for (let i = 0; i < 5; i++) await seed(`wf_${i}`, 1_000 * i);
    const r = await pruneTraces(env.TRACES, { maxAgeMs: 1e9, maxRows: 2, nowMs: 5_000 });
    expect(r).toEqual({ workflows: 3, calls: 6 });
    const left = await env.TRACES.prepare("SELECT DISTINCT workflow_id FROM call_traces ORDER BY workflow_id").all<{ workflow_id: string }>();
    expect(left.results.map((w) => w.workflow_id)).toEqual(["wf_3", "wf_4"]);
    expect(await count("workflow_traces")).toBe(2);
    // A repeated write of a kept workflow changes nothing.
    await seed("wf_4", 4_000);
    expect(await count("call_traces")).toBe(4);
  });
});
