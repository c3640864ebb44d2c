/**
 * Pool admission control through the gateway: a pool whose server never finishes fills with committed
 * work until the coordinator predicts a new workflow would miss its deadline, and refuses it with 503
 * and Retry-After (or admits it best-effort when its tenant allows that). The predictor itself is
 * tested in test/node/workflow-admission.test.ts; here, the wiring and what the client sees.
 */
import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { STEP } from "../../src/core/chess";
import { admin, api } from "./helpers";
import { TEST_TENANT_ID } from "./tenant-fixture";

const CALLS = [
  { step: STEP.retriever, inputTokens: 301, outputTokens: 5 },
  { step: STEP.candidate, inputTokens: 11000, outputTokens: 600 },
  { step: STEP.candidate, inputTokens: 8000, outputTokens: 400 },
  { step: STEP.unitTester, inputTokens: 275, outputTokens: 4 },
];

let released = false;

function submit(body: unknown, key?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) };
  return api("/v1/workflows", { method: "POST", headers, body: JSON.stringify(body) });
}

/** Submits until the pool refuses one; returns the ids accepted before it and the refusal. */
async function fillUntilRefused(max: number): Promise<{ accepted: number; ids: string[]; refusal: Response | undefined }> {
  const ids: string[] = [];
  for (let i = 0; i < max; i++) {
    const res = await submit({ kind: "replay", calls: CALLS, sloScale: 2 });
    if (res.status !== 202) return { accepted: i, ids, refusal: res };
    ids.push(((await res.json()) as { id: string }).id);
  }
  return { accepted: max, ids, refusal: undefined };
}

type Budgeted = { bestEffort?: boolean; sloMs: number; stages: { calls: { budgetMs: number }[] }[] };

beforeEach(async () => {
  released = false;
  // The server takes every call and never answers while the test runs: committed work only grows.
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
    while (!released) await new Promise((r) => setTimeout(r, 10));
    return Response.json({ error: { message: "released" } }, { status: 500 });
  });
  expect((await admin("/pools/default/instances", "POST", { id: "a100-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 })).status).toBe(201);
});
afterEach(async () => {
  released = true;
  vi.restoreAllMocks();
  await reset();
});

describe("pool admission control", () => {
  it("refuses with 503 overloaded and Retry-After once the committed work cannot meet a new deadline; the refusal keeps no quota", async () => {
    const { accepted, refusal } = await fillUntilRefused(80);
    expect(accepted).toBeGreaterThan(0);
    expect(refusal?.status).toBe(503);
    const body = (await refusal?.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("overloaded");
    expect(body.error.message).toMatch(/predicts/);
    expect(refusal?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    // The refused workflow's concurrency slot went back: only the accepted ones hold one.
    expect((await env.TENANT.getByName(TEST_TENANT_ID).usage({ workflowsPerS: 10_000, burst: 100_000, maxConcurrent: 100_000 })).running).toBe(accepted);
  });

  it("admits everything with admission off, and refuses again when it is back on", async () => {
    const { refusal } = await fillUntilRefused(80);
    expect(refusal?.status).toBe(503);
    expect((await admin("/pools/default/policy", "PUT", { admission: "off" })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await submit({ kind: "replay", calls: CALLS, sloScale: 2 })).status).toBe(202);
    expect((await admin("/pools/default/policy", "PUT", { admission: "enforce" })).status).toBe(200);
    expect((await submit({ kind: "replay", calls: CALLS, sloScale: 2 })).status).toBe(503);
  });

  it("runs a tenant's workflow best-effort instead, when the tenant allows it: scheduled loosely, reported against its own SLO", async () => {
    const { ids, refusal } = await fillUntilRefused(80);
    expect(refusal?.status).toBe(503);
    const created = await admin("/tenants", "POST", { name: "patient", config: { overload: "best-effort", slo: { defaultScale: 5, minScale: 1, maxScale: 20 } } });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const res = await submit({ kind: "replay", calls: CALLS, sloScale: 2 }, key);
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { id: string; bestEffort: boolean; sloMs: number };
    expect(accepted.bestEffort).toBe(true);
    const view = (await (await api(`/v1/workflows/${accepted.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Budgeted;
    const guaranteed = (await (await api(`/v1/workflows/${ids[0] ?? ""}`)).json()) as Budgeted;
    expect(view.bestEffort).toBe(true);
    expect(Math.abs(view.sloMs - accepted.sloMs)).toBeLessThan(1);
    expect(guaranteed.bestEffort).toBeUndefined();
    // The same workflow with the same SLO, admitted normally, gets a budget a best-effort one exceeds many times over.
    const loose = view.stages[0]?.calls[0]?.budgetMs ?? 0;
    const normal = guaranteed.stages[0]?.calls[0]?.budgetMs ?? Infinity;
    expect(loose).toBeGreaterThan(20 * normal);
  });
});
