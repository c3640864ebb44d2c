/**
 * text2sql workflows through the gateway and the objects in workerd: the model is the emulator's
 * Text-to-SQL mode (or scripted answers) behind a fake vLLM chat endpoint, the SQL runs on a small
 * database in the Worker's D1 binding.
 */
import { env } from "cloudflare:workers";
import { reset, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { STEP } from "../../src/core/chess";
import { text2sqlAnswer } from "../../src/emulator/text2sql/answer";
import { admin, api, until, TWO_GPU_POOL } from "./helpers";

const POOL = TWO_GPU_POOL;

const SHOP = [
  "CREATE TABLE stores (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL)",
  "CREATE TABLE orders (id INTEGER PRIMARY KEY, store_id INTEGER NOT NULL REFERENCES stores(id), total REAL NOT NULL, status TEXT NOT NULL)",
  "INSERT INTO stores VALUES (1, 'Velo Nord', 'Hamburg'), (2, 'Velo Sud', 'Munich'), (3, 'Velo West', 'Cologne')",
  "INSERT INTO orders VALUES (1, 1, 120.5, 'shipped'), (2, 1, 80, 'open'), (3, 2, 300, 'shipped'), (4, 3, 45.25, 'returned')",
];

interface Candidate { index: number; sql: string | null; status: string | null; error: string | null; reviseRounds: number; attempts: { round: number; status: string; error?: string; sql?: string }[] }
interface View {
  id: string;
  status: string;
  error?: { code: string; message: string };
  latencyMs: number | null;
  stages: { step: string; durationMs: number | null; calls: { instance: string; budgetMs: number }[] }[];
  text2sql: { sql: string | null; columns: string[] | null; rows: unknown[][] | null; selfCorrectionRounds: number; candidates: Candidate[]; linkedTables: string[]; notes: string[]; sqlExecutions: { phase: string }[] };
}

function sseChat(text: string): Response {
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
  const pieces = text.match(/[\s\S]{1,16}/g) ?? [""];
  const events = [
    chunk({ role: "assistant", content: "" }, null),
    ...pieces.map((p, i) => chunk({ content: p }, i === pieces.length - 1 ? "stop" : null)),
    { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 100, completion_tokens: pieces.length, total_tokens: 100 + pieces.length } },
  ];
  return new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } });
}

/** A fake vLLM whose chat answers come from `model(prompt, step)`; the emulator's answer when it returns undefined. */
function fakeModel(model: (prompt: string, step: string) => string | undefined = () => undefined) {
  const prompts: string[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const body = JSON.parse(String(init?.body ?? "{}")) as { messages?: { content: string }[] };
    const prompt = body.messages?.[0]?.content ?? "";
    prompts.push(prompt);
    const step = (prompt.split("\n")[0] ?? "").replace("### hexflow-task:", "").trim();
    expect(String(input)).toMatch(/\/v1\/chat\/completions$/);
    return sseChat(model(prompt, step) ?? text2sqlAnswer(prompt, 7, 0) ?? "");
  });
  return { spy, prompts };
}

async function submit(body: unknown): Promise<Response> {
  return api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function finished(id: string): Promise<View> {
  return until(async () => {
    const v = (await (await api(`/v1/workflows/${id}`)).json()) as View;
    return v.status === "running" || v.status === "queued" ? undefined : v;
  }, 15_000);
}

async function run(body: Record<string, unknown>): Promise<View> {
  const res = await submit({ kind: "text2sql", database: "shop", sloMs: 600_000, ...body });
  expect(res.status).toBe(202);
  return finished(((await res.json()) as { id: string }).id);
}

beforeEach(async () => {
  for (const s of SHOP) await env.DEMO_DB.prepare(s).run();
  for (const i of POOL) expect((await admin("/pools/default/instances", "POST", i)).status).toBe(201);
  const reg = await api("/v1/databases", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "shop", target: { kind: "d1", binding: "DEMO_DB" } }) });
  expect(reg.status).toBe(201);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await env.DEMO_DB.batch(["DROP TABLE IF EXISTS orders", "DROP TABLE IF EXISTS stores"].map((s) => env.DEMO_DB.prepare(s)));
  await reset();
});

describe("text2sql workflows", () => {
  it("answers a question with SQL and rows after schema linking, candidates and testing", async () => {
    const { prompts } = fakeModel();
    const v = await run({ question: "Which stores are in Hamburg? Give the store name and city.", candidates: 2 });
    expect(v.status).toBe("succeeded");
    expect(v.stages.slice(0, 6).map((s) => s.step)).toEqual([STEP.retriever, STEP.keywords, STEP.retriever, "select_schema", STEP.retriever, STEP.candidate]);
    expect(v.text2sql.sql).toMatch(/select/i);
    expect(v.text2sql.rows).not.toBeNull();
    expect(v.text2sql.linkedTables).toContain("stores");
    expect(v.latencyMs).toBeGreaterThan(0);
    for (const s of v.stages) expect(s.durationMs).not.toBeNull();
    // The schema the candidates saw is the linked one, rendered from what D1 reported.
    expect(prompts.find((p) => p.includes(STEP.candidate))).toMatch(/CREATE TABLE stores/);
  });

  it("revises a failing candidate with the database's own error, and the round shows in the answer", async () => {
    const { prompts } = fakeModel((_p, step) => {
      if (step === STEP.candidate) return "```sql\nSELECT nme FROM stores\n```";
      if (step === STEP.revise) return "```sql\nSELECT name FROM stores ORDER BY name\n```";
      return undefined;
    });
    const v = await run({ question: "List the store names.", candidates: 1, maxRounds: 3 });
    expect(v.status).toBe("succeeded");
    expect(v.text2sql.selfCorrectionRounds).toBe(1);
    expect(v.text2sql.candidates[0]?.attempts.map((a) => a.status)).toEqual(["error", "ok"]);
    expect(v.text2sql.candidates[0]?.attempts[0]?.error).toMatch(/no such column: nme/);
    expect(prompts.find((p) => p.includes(STEP.revise))).toMatch(/no such column: nme/);
    expect(v.text2sql.rows).toEqual([["Velo Nord"], ["Velo Sud"], ["Velo West"]]);
    expect(v.stages.filter((s) => s.step === STEP.revise)).toHaveLength(1);
  });

  it("ends the loop at the round limit and fails with every candidate's error", async () => {
    fakeModel((_p, step) => (step === STEP.candidate || step === STEP.revise ? "```sql\nSELECT nosuch FROM stores\n```" : undefined));
    const v = await run({ question: "List the store names.", candidates: 2, maxRounds: 2 });
    expect(v.status).toBe("failed");
    expect(v.error?.code).toBe("no_executable_candidate");
    expect(v.text2sql.selfCorrectionRounds).toBe(2);
    expect(v.stages.filter((s) => s.step === STEP.revise)).toHaveLength(2);
    for (const c of v.text2sql.candidates) expect(c.attempts).toHaveLength(3);
  });

  it("refuses a write the model wrote, without running it", async () => {
    fakeModel((_p, step) => (step === STEP.candidate || step === STEP.revise ? "```sql\nDELETE FROM orders\n```" : undefined));
    const v = await run({ question: "Remove all orders.", candidates: 1, maxRounds: 1 });
    expect(v.status).toBe("failed");
    expect(v.text2sql.candidates[0]?.error).toMatch(/DELETE|read-only/i);
    const left = await env.DEMO_DB.prepare("SELECT COUNT(*) AS n FROM orders").first<{ n: number }>();
    expect(left?.n).toBe(4);
  });

  it("with Prefer: wait, one request answers with the SQL and rows", async () => {
    fakeModel();
    const res = await api("/v1/workflows", {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "wait=10" },
      body: JSON.stringify({ kind: "text2sql", database: "shop", question: "List the stores and their cities.", sloMs: 600_000 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("preference-applied")).toBe("wait=10");
    const v = (await res.json()) as View;
    expect(v.status).toBe("succeeded");
    expect(v.text2sql.rows?.length).toBeGreaterThan(0);
  });

  it("a repeated alarm changes nothing once the workflow has ended", async () => {
    fakeModel();
    const v = await run({ question: "How many orders were shipped?", candidates: 1 });
    const stub = env.WORKFLOW.getByName(v.id);
    await runDurableObjectAlarm(stub);
    const again = (await (await api(`/v1/workflows/${v.id}`)).json()) as View;
    expect(again.stages.length).toBe(v.stages.length);
    expect(again.status).toBe(v.status);
  });
});

describe("text2sql requests that are refused", () => {
  it.each([
    [{ kind: "text2sql", database: "shop" }, 400],
    [{ kind: "text2sql", database: "shop", question: "   " }, 400],
    [{ kind: "text2sql", database: "shop", question: "q", candidates: 0 }, 400],
    [{ kind: "text2sql", database: "shop", question: "q", maxRounds: 11 }, 400],
    [{ kind: "text2sql", database: "shop", question: "q", extra: 1 }, 400],
    [{ kind: "text2sql", database: "nope", question: "q" }, 404],
  ])("%j → %i, JSON error", async (body, status) => {
    const res = await submit(body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as { error: { code: string; message: string } };
    expect(json.error.message.length).toBeGreaterThan(0);
  });
});
