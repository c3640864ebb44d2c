/**
 * The limits of src/core/limits.ts as clients meet them: a body over the size limit is a 413 (with or
 * without Content-Length), a request over a field limit is a 400, each in the JSON error shape, and a
 * refused request leaves nothing behind (no WorkflowObject, no database, no tenant).
 */
import { env } from "cloudflare:workers";
import { listDurableObjectIds } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { LIMITS } from "../../src/core/limits";
import { ADMIN, api } from "./helpers";

const JSON_HEADERS = { "content-type": "application/json" };
const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }).loose() });

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  const body = ErrorSchema.parse(await res.json());
  return { status: res.status, code: body.error.code, message: body.error.message };
}

function post(path: string, body: unknown, headers: Record<string, string> = JSON_HEADERS): Promise<Response> {
  return api(path, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** A body with no Content-Length: the bytes arrive as a stream of chunks, so only counting them can catch it. */
function chunked(text: string, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkBytes));
      at += chunkBytes;
      return undefined;
    },
  });
}

const over = "x".repeat(LIMITS.http.maxBodyBytes + 1);
const TEXT2SQL = { kind: "text2sql", database: "shop", question: "How many items are there?" };
const stage = (id: string, extra: Record<string, unknown> = {}) => ({ id, prompt: "Say hi", maxTokens: 8, ...extra });

afterEach(async () => {
  // Every request here is refused: none may have started a workflow.
  expect(await listDurableObjectIds(env.WORKFLOW)).toEqual([]);
});

describe("request body size", () => {
  it("answers 413 payload_too_large for a body over the limit, on workflow, OpenAI, database and admin routes", async () => {
    for (const path of ["/v1/workflows", "/v1/chat/completions", "/v1/completions", "/v1/databases", "/admin/tenants"]) {
      const headers = path.startsWith("/admin") ? ADMIN : JSON_HEADERS;
      const e = await errorOf(await post(path, JSON.stringify({ kind: "dag", pad: over }), headers));
      expect(e, path).toMatchObject({ status: 413, code: "payload_too_large" });
      expect(e.message).toContain(String(LIMITS.http.maxBodyBytes));
    }
    expect(await (await api("/v1/databases")).json()).toEqual({ databases: [] });
    const tenants = z.object({ tenants: z.array(z.object({ name: z.string() })) }).parse(await (await api("/admin/tenants", { headers: ADMIN })).json());
    expect(tenants.tenants.map((t) => t.name)).toEqual(["test"]);
  });

  it("counts a chunked body without Content-Length, and passes one under the limit on intact", async () => {
    const big = new Request("http://gateway.test/", { method: "POST", body: chunked(over) });
    expect(big.headers.get("content-length")).toBeNull();
    const e = await errorOf(await api("/v1/chat/completions", { method: "POST", headers: JSON_HEADERS, body: chunked(over) }));
    expect(e).toMatchObject({ status: 413, code: "payload_too_large" });

    // Under the limit, the buffered body reaches the route whole: its validation speaks about the question, not the JSON.
    const small = JSON.stringify({ ...TEXT2SQL, question: "q".repeat(LIMITS.text2sql.maxQuestionChars + 1) });
    const ok = await errorOf(await api("/v1/workflows", { method: "POST", headers: JSON_HEADERS, body: chunked(small, 1000) }));
    expect(ok).toMatchObject({ status: 400, code: "invalid_request" });
    expect(ok.message).toMatch(/question/);
  });

  it("lets a body at the limit through to the route's own validation", async () => {
    const body = JSON.stringify({ ...TEXT2SQL, pad: "" });
    const padded = body.replace('"pad":""', `"pad":"${"x".repeat(LIMITS.http.maxBodyBytes - body.length)}"`);
    expect(padded.length).toBe(LIMITS.http.maxBodyBytes);
    const e = await errorOf(await post("/v1/workflows", padded));
    expect(e).toMatchObject({ status: 400, code: "invalid_request" });
    expect(e.message).toMatch(/pad/);
  });
});

describe("field limits", () => {
  it("refuses a question over the limit with 400", async () => {
    const e = await errorOf(await post("/v1/workflows", { ...TEXT2SQL, question: "q".repeat(LIMITS.text2sql.maxQuestionChars + 1) }));
    expect(e).toMatchObject({ status: 400, code: "invalid_request" });
    expect(e.message).toMatch(/question/);
    expect(e.message).toContain(String(LIMITS.text2sql.maxQuestionChars));
  });

  it("refuses maxRows over its cap with 400", async () => {
    const e = await errorOf(await post("/v1/workflows", { ...TEXT2SQL, maxRows: LIMITS.text2sql.maxRows.max + 1 }));
    expect(e).toMatchObject({ status: 400, code: "invalid_request" });
    expect(e.message).toMatch(/maxRows/);
  });

  it("refuses a DAG with too many stages, too much fan-out or too many calls with 400", async () => {
    const { maxStages, maxFanOut, maxTotalCalls } = LIMITS.dag;
    const stages = Array.from({ length: maxStages + 1 }, (_, i) => stage(`s${i}`));
    expect(await errorOf(await post("/v1/workflows", { kind: "dag", stages }))).toEqual({ status: 400, code: "invalid_request", message: `stages: ${maxStages + 1} stages are over the limit of ${maxStages}` });

    const wide = [stage("x", { fanOut: maxFanOut + 1 })];
    expect(await errorOf(await post("/v1/workflows", { kind: "dag", stages: wide }))).toEqual({ status: 400, code: "invalid_request", message: `stage "x": fanOut ${maxFanOut + 1} is over the limit of ${maxFanOut}` });

    const many = Array.from({ length: maxTotalCalls / maxFanOut + 1 }, (_, i) => stage(`s${i}`, { fanOut: maxFanOut }));
    const calls = many.length * maxFanOut;
    expect(await errorOf(await post("/v1/workflows", { kind: "dag", stages: many }))).toEqual({ status: 400, code: "invalid_request", message: `stages: ${calls} calls in total (the sum of fanOut) are over the limit of ${maxTotalCalls}` });
  });

  it("refuses max_tokens over the cap with 400 on both OpenAI endpoints", async () => {
    const cap = LIMITS.openai.maxTokensCap;
    const chat = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: cap + 1 });
    expect(await errorOf(chat)).toMatchObject({ status: 400, code: "invalid_request" });
    const chat2 = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_completion_tokens: cap + 1 });
    expect(await errorOf(chat2)).toMatchObject({ status: 400, code: "invalid_request" });
    const completion = await errorOf(await post("/v1/completions", { prompt: "hi", max_tokens: cap + 1 }));
    expect(completion).toMatchObject({ status: 400, code: "invalid_request" });
    expect(completion.message).toContain(String(cap));
  });
});
