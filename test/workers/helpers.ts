import { exports } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, beforeEach, expect, vi } from "vitest";
import { STEP } from "../../src/core/chess";
import { TEST_KEY } from "./tenant-fixture";

/** The pool most workers tests register: an A100 and an L40S at fakeVllm's URLs, 20x faster than real time. */
export const TWO_GPU_POOL = [
  { id: "a100-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 },
  { id: "l40s-1", url: "http://127.0.0.1:9002", gpu: "L40S", timeScale: 20 },
];

/** A CHESS-shaped replay in three stages (retriever, two SQL candidates, unit tester) with long candidate prompts. */
export const HEAVY_REPLAY = [
  { step: STEP.retriever, inputTokens: 301, outputTokens: 5 },
  { step: STEP.candidate, inputTokens: 11000, outputTokens: 600 },
  { step: STEP.candidate, inputTokens: 8000, outputTokens: 400 },
  { step: STEP.unitTester, inputTokens: 275, outputTokens: 4 },
];

/** The same shape with short candidates, for tests that time faults rather than load. */
export const LIGHT_REPLAY = [
  { step: STEP.retriever, inputTokens: 301, outputTokens: 5 },
  { step: STEP.candidate, inputTokens: 2000, outputTokens: 60 },
  { step: STEP.candidate, inputTokens: 1800, outputTokens: 40 },
  { step: STEP.unitTester, inputTokens: 275, outputTokens: 4 },
];

export const ADMIN = { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" };

/** A request to the gateway; public routes go as the test tenant unless the request has its own Authorization. */
export function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (path.startsWith("/v1") && !headers.has("authorization")) headers.set("authorization", `Bearer ${TEST_KEY}`);
  return exports.default.fetch(`http://gateway.test${path}`, { ...init, headers });
}

/** A JSON POST to the gateway as the test tenant; a string body is sent as it is. */
export function postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

export function admin(path: string, method: string, body?: unknown): Promise<Response> {
  return api(`/admin${path}`, { method, headers: ADMIN, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** A vLLM-like SSE completion as the emulator sends it: one text chunk, usage chunk, [DONE]. */
export function sseCompletion(promptTokens: number, completionTokens: number): Response {
  const events = [
    { id: "cmpl-1", object: "text_completion", choices: [{ index: 0, text: "tok ".repeat(completionTokens), finish_reason: "length" }] },
    { id: "cmpl-1", object: "text_completion", choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens } },
  ];
  const body = `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`;
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** The coordinator's health probe (GET /health), which a fake vLLM answers 200 without counting it as a call. */
export const isProbe = (input: RequestInfo | URL): boolean => String(input instanceof Request ? input.url : input).endsWith("/health");

/** The completion a replayed call asks for: its prompt and output lengths come as hint headers. */
export function hintedCompletion(headers: Headers): Response {
  return sseCompletion(Number(headers.get("x-hexflow-prompt-tokens") ?? 1), Number(headers.get("x-hexflow-output-tokens") ?? 1));
}

/** Starts a replay workflow as the test tenant (a loose SLO unless given) and answers its id; throws unless 202. */
export async function submitReplay(calls: readonly { step: string; inputTokens: number; outputTokens: number }[], sloMs = 10_000_000): Promise<string> {
  const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ kind: "replay", calls, sloMs }) });
  if (res.status !== 202) throw new Error(`POST /v1/workflows answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** The workflow's view once it has ended (neither queued nor running). */
export function endedView<V extends { status: string }>(id: string, timeoutMs = 10_000): Promise<V> {
  return until(async () => {
    const v = (await (await api(`/v1/workflows/${id}`)).json()) as V;
    return v.status === "running" || v.status === "queued" ? undefined : v;
  }, timeoutMs);
}

/** Spies on outbound fetch; every vLLM call answers at once with the hinted output length. */
export function fakeVllm(onRequest: (url: string, body: Record<string, unknown>, headers: Headers) => void = () => {}) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    if (isProbe(input)) return new Response(null, { status: 200 });
    const body = JSON.parse(String(init?.body ?? "{}")) as Record<string, unknown>;
    const headers = new Headers(init?.headers);
    onRequest(String(input), body, headers);
    const out = Number(headers.get("x-hexflow-output-tokens") ?? 1);
    return sseCompletion(Number(headers.get("x-hexflow-prompt-tokens") ?? 1), out);
  });
}

export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Each test starts with these instances registered in the default pool, and ends with mocks restored and storage reset. */
export function poolPerTest(instances: readonly Record<string, unknown>[]): void {
  beforeEach(async () => {
    for (const i of instances) expect((await admin("/pools/default/instances", "POST", i)).status).toBe(201);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await reset();
  });
}
