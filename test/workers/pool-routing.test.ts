/**
 * POOL_ROUTES end to end: requests without a pool run on their model's pool, an explicit pool wins, and
 * an unknown model is refused before anything exists. The app is called with its environment's
 * POOL_ROUTES replaced (the gateway reads it per request), so the rest of the suite keeps wrangler.toml's.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, listDurableObjectIds, reset, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/api/app";
import { DEFAULT_MODEL } from "../../src/core/gpu";
import { admin, endedView, fakeVllm } from "./helpers";
import { TEST_KEY } from "./tenant-fixture";

/** Two pools, one instance each, told apart by port; no default pool, so other models are refused. */
const ROUTES = `model-a=pool-a,${DEFAULT_MODEL}=pool-b`;
const PORT: Record<string, string> = { "pool-a": "9101", "pool-b": "9102" };

async function send(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}, routes = ROUTES): Promise<Response> {
  const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...init.headers };
  const req = new Request(`http://gateway.test${path}`, { method: init.method ?? "POST", headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
  const ctx = createExecutionContext();
  const res = await app.fetch(req, { ...env, POOL_ROUTES: routes }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const dag = (extra: Record<string, unknown>) => ({ kind: "dag", stages: [{ id: "a", prompt: "hi", maxTokens: 4 }], sloMs: 10_000_000, ...extra });
const chat = (model: string) => ({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });

/** The WorkflowObjects that exist (earlier tests' too: reset() does not forget ids). */
const workflowIds = async (): Promise<string[]> => (await listDurableObjectIds(env.WORKFLOW)).map((id) => id.toString()).sort();

/** The instance ports the vLLM calls went to, one per call. */
let ports: string[] = [];

beforeEach(async () => {
  ports = [];
  fakeVllm((url) => ports.push(new URL(url).port));
  for (const [pool, port] of Object.entries(PORT)) {
    expect((await admin(`/pools/${pool}/instances`, "POST", { id: "a100-0", url: `http://127.0.0.1:${port}`, gpu: "A100", timeScale: 20 })).status).toBe(201);
  }
});
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

async function ranOn(res: Response): Promise<string[]> {
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  expect(((await endedView<{ status: string }>(id)) as { status: string }).status).toBe("succeeded");
  return ports;
}

describe("POOL_ROUTES", () => {
  it("runs each model's workflows on its own pool only", async () => {
    expect(await ranOn(await send("/v1/workflows", { body: dag({ model: "model-a" }) }))).toEqual([PORT["pool-a"]]);
    ports = [];
    expect(await ranOn(await send("/v1/workflows", { body: dag({ model: DEFAULT_MODEL }) }))).toEqual([PORT["pool-b"]]);
    ports = [];
    // A replay names no model: it is one for the default model.
    expect(await ranOn(await send("/v1/workflows", { body: { kind: "replay", calls: [{ step: "retriever", inputTokens: 10, outputTokens: 3 }], sloMs: 10_000_000 } }))).toEqual([PORT["pool-b"]]);
  });

  it("routes OpenAI requests by their model", async () => {
    const res = await send("/v1/chat/completions", { body: chat(DEFAULT_MODEL) });
    expect(res.status).toBe(200);
    expect(ports).toEqual([PORT["pool-b"]]);
  });

  it("lets an explicit pool (field or header) win over the model's route", async () => {
    expect(await ranOn(await send("/v1/workflows", { body: dag({ model: "model-a", pool: "pool-b" }) }))).toEqual([PORT["pool-b"]]);
    ports = [];
    const res = await send("/v1/chat/completions", { body: chat(DEFAULT_MODEL), headers: { "x-hexflow-pool": "pool-a" } });
    expect(res.status).toBe(200);
    expect(ports).toEqual([PORT["pool-a"]]);
  });

  it("refuses an unknown model with 400 unknown_model, naming the known ones, and creates nothing", async () => {
    const before = await workflowIds();
    for (const [path, body] of [["/v1/workflows", dag({ model: "mistral-large" })], ["/v1/chat/completions", chat("mistral-large")], ["/v1/completions", { model: "mistral-large", prompt: "hi" }]] as const) {
      const res = await send(path, { body, headers: { "idempotency-key": "k-unknown-model" } });
      expect(res.status).toBe(400);
      const e = (await res.json()) as { error: { code: string; message: string } };
      expect(e.error.code).toBe("unknown_model");
      expect(e.error.message).toContain(`known models: ${DEFAULT_MODEL}, model-a`);
    }
    expect(await workflowIds()).toEqual(before);
    expect(ports).toEqual([]);
    // The idempotency key was never claimed: the same key starts a routed request.
    expect((await send("/v1/workflows", { body: dag({ model: "model-a" }), headers: { "idempotency-key": "k-unknown-model" } })).status).toBe(202);
  });

  it("answers 500 misconfigured for a malformed POOL_ROUTES, naming the fault, and creates nothing", async () => {
    const before = await workflowIds();
    const res = await send("/v1/workflows", { body: dag({}) }, "model-a=Pool A");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "misconfigured", message: expect.stringContaining('POOL_ROUTES: entry "model-a"') } });
    expect(await workflowIds()).toEqual(before);
  });

  it("lists the routed models at GET /v1/models in OpenAI's shape", async () => {
    const res = await send("/v1/models", { method: "GET" });
    expect(res.status).toBe(200);
    const ids = [DEFAULT_MODEL, "model-a"].sort();
    expect(await res.json()).toEqual({ object: "list", data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "hexflow" })) });
    // wrangler.toml's own routes: the default model, on "default".
    const own = (await (await send("/v1/models", { method: "GET" }, env.POOL_ROUTES)).json()) as { data: { id: string }[] };
    expect(own.data.map((m) => m.id)).toEqual([DEFAULT_MODEL]);
  });
});
