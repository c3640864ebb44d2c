/**
 * Per-tenant quotas (a token bucket for starts, a cap on running workflows; TenantObject) and SLO classes,
 * through the public routes: 429 with Retry-After and code rate_limited, a concurrency slot that comes back
 * when the workflow's alarm releases it, and SLO scales held to the tenant's class.
 */
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { admin, api, fakeVllm, sseCompletion, until } from "./helpers";
import { asKey, createTenant, postJson, REPLAY, registerPool } from "./security-helpers";

async function setQuota(tenantId: string, quota: { workflowsPerS: number; burst: number; maxConcurrent: number }): Promise<void> {
  const res = await admin(`/tenants/${tenantId}`, "PATCH", { quota });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ tenant: { config: { quota } } });
}

async function expectRateLimited(res: Response): Promise<number> {
  expect(res.status).toBe(429);
  const retryAfter = res.headers.get("retry-after") ?? "";
  expect(retryAfter).toMatch(/^\d+$/);
  expect(await res.json()).toMatchObject({ error: { code: "rate_limited", message: expect.any(String) } });
  return Number(retryAfter);
}

const running = async (tenantId: string): Promise<number> => ((await (await admin(`/tenants/${tenantId}`, "GET")).json()) as { usage: { running: number } }).usage.running;

beforeEach(registerPool);
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("tenant quotas", () => {
  it("allows a burst, then answers 429 with Retry-After until the bucket refills", async () => {
    fakeVllm();
    const t = await createTenant("bursty");
    await setQuota(t.tenant.id, { workflowsPerS: 0.5, burst: 2, maxConcurrent: 100 });
    for (let i = 0; i < 2; i++) expect((await postJson(t.key, "/v1/workflows", REPLAY)).status).toBe(202);
    // The bucket is empty: the next token comes in 2 s at 0.5 per second.
    const retryAfter = await expectRateLimited(await postJson(t.key, "/v1/workflows", REPLAY));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    // The OpenAI-style route draws on the same bucket and says so in OpenAI's shape.
    const chat = await postJson(t.key, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] });
    expect(await expectRateLimited(chat)).toBeGreaterThanOrEqual(1);
    // One tenant's empty bucket is nobody else's: the test tenant still starts.
    expect((await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(REPLAY) })).status).toBe(202);
    // The refusals took nothing: the bucket still holds less than the one token a start needs.
    const { usage } = (await (await admin(`/tenants/${t.tenant.id}`, "GET")).json()) as { usage: { tokens: number } };
    expect(usage.tokens).toBeLessThan(1);
  });

  it("caps running workflows; the slot comes back when the workflow ends", async () => {
    // A vLLM that takes 800 ms per call, so the first workflow is still running when the second asks.
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      await new Promise((r) => setTimeout(r, 800));
      return sseCompletion(300, 5);
    });
    const t = await createTenant("single");
    await setQuota(t.tenant.id, { workflowsPerS: 100, burst: 100, maxConcurrent: 1 });
    const first = await postJson(t.key, "/v1/workflows", REPLAY);
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    expect(await expectRateLimited(await postJson(t.key, "/v1/workflows", REPLAY))).toBe(1);
    expect(await running(t.tenant.id)).toBe(1);

    const ended = await until(async () => {
      const v = (await (await asKey(t.key, `/v1/workflows/${id}`)).json()) as { status: string };
      return v.status === "running" || v.status === "queued" ? undefined : v.status;
    }, 10_000);
    expect(ended).toBe("succeeded");
    // The workflow's alarm releases the slot (retried until it lands), a moment after the end.
    await until(async () => ((await running(t.tenant.id)) === 0 ? true : undefined), 10_000);
    expect((await postJson(t.key, "/v1/workflows", REPLAY)).status).toBe(202);
  }, 30_000);
});

describe("SLO classes", () => {
  it("holds a request's SLO to the tenant's class: tighter is 400 slo_out_of_range, within is scaled from the pool's base SLO", async () => {
    fakeVllm();
    const t = await createTenant("gold", { slo: { minScale: 2, defaultScale: 5, maxScale: 20 } });
    const { baseSloS } = (await (await admin("/pools/default", "GET")).json()) as { baseSloS: number };
    expect(baseSloS).toBeGreaterThan(0);

    for (const ask of [{ sloScale: 1 }, { sloScale: 21 }, { sloMs: 1.5 * baseSloS * 1000 }]) {
      const res = await postJson(t.key, "/v1/workflows", { ...REPLAY, ...ask });
      expect(res.status, JSON.stringify(ask)).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "slo_out_of_range", message: expect.any(String) } });
    }
    // Refused asks took no quota: nothing runs for the tenant.
    expect(await running(t.tenant.id)).toBe(0);

    for (const [ask, scale] of [[{ sloScale: 3 }, 3], [{}, 5]] as const) {
      const res = await postJson(t.key, "/v1/workflows", { ...REPLAY, ...ask });
      expect(res.status).toBe(202);
      const started = (await res.json()) as { id: string; sloMs: number };
      expect(started.sloMs).toBe(Math.round(scale * baseSloS * 1000));
      const view = (await (await asKey(t.key, `/v1/workflows/${started.id}`)).json()) as { sloMs: number };
      expect(view.sloMs).toBeCloseTo(scale * baseSloS * 1000, 2);
    }
  });
});
