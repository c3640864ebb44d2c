import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { CHESS_STEP_MEANS, STEP } from "../../src/core/chess";
import { defaultCost, estimateSeconds } from "../../src/core/cost-model";
import { admin, api, fakeVllm, isProbe, sseCompletion, until, poolPerTest, TWO_GPU_POOL, HEAVY_REPLAY } from "./helpers";

const POOL = TWO_GPU_POOL;
const CALLS = HEAVY_REPLAY;

interface View {
  id: string;
  status: string;
  sloMs: number;
  latencyMs: number | null;
  sloMet: boolean | null;
  stages: { step: string; calls: { instance: string; budgetMs: number; releasedMs: number; deadlineMs: number; admittedMs: number | null; finishedMs: number | null; alphaVersion: number; completionTokens: number | null; output?: string }[] }[];
}

async function submit(body: unknown): Promise<Response> {
  return api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function finished(id: string): Promise<View> {
  return until(async () => {
    const v = (await (await api(`/v1/workflows/${id}`)).json()) as View;
    return v.status === "running" || v.status === "queued" ? undefined : v;
  });
}

poolPerTest(POOL);

describe("replay workflows through the gateway and the objects", () => {
  it("runs a workflow to succeeded, stage by stage, streaming every call", async () => {
    const seen: Record<string, unknown>[] = [];
    fakeVllm((_url, body) => seen.push(body));
    const res = await submit({ kind: "replay", calls: CALLS, sloMs: 200_000 });
    expect(res.status).toBe(202);
    const { id, links } = (await res.json()) as { id: string; links: { self: string } };
    expect(id).toMatch(/^wf_[0-9a-f]{32}$/);
    expect(links.self).toBe(`/v1/workflows/${id}`);
    const v = await finished(id);
    expect(v.status).toBe("succeeded");
    expect(v.stages.map((s) => [s.step, s.calls.length])).toEqual([[STEP.retriever, 1], [STEP.candidate, 2], [STEP.unitTester, 1]]);
    for (const s of v.stages) for (const c of s.calls) expect(c.completionTokens).toBeGreaterThan(0);
    // What the model wrote comes back with each call, assembled from the stream's chunks.
    for (const s of v.stages) for (const c of s.calls) expect(c.output).toBe("tok ".repeat(c.completionTokens ?? 0));
    expect(v.sloMet).toBe(true);
    // A call that stops streaming would lose the platform's connection budget: every call streams with usage.
    expect(seen).toHaveLength(4);
    for (const b of seen) expect(b).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("gives the first stage its share of the SLO by expected stage times (DESIGN section 2)", async () => {
    fakeVllm();
    const { id } = (await (await submit({ kind: "replay", calls: CALLS, sloMs: 100_000 })).json()) as { id: string };
    const v = await finished(id);
    // Pool t̄(s): mean over the two instances at the step's mean tokens; remaining = the CHESS template after IR.
    const tbar = (s: string) => {
      const t = CHESS_STEP_MEANS[s];
      if (t === undefined) return 0;
      return (estimateSeconds(defaultCost("A100"), t.inputTokens, t.outputTokens) + estimateSeconds(defaultCost("L40S"), t.inputTokens, t.outputTokens)) / 2;
    };
    const template = [STEP.retriever, STEP.keywords, STEP.retriever, STEP.retriever, STEP.retriever, STEP.candidate, STEP.revise, STEP.revise, STEP.revise, STEP.revise, STEP.unitTester, STEP.unitTest, STEP.unitTester, STEP.evaluate, STEP.unitTester];
    const total = template.reduce((sum, s) => sum + tbar(s), 0);
    const first = v.stages[0]?.calls[0];
    // B = (S - (r - a)) * t̄(IR) / Σ: the release comes a few pool-clock ms after arrival.
    expect(first?.releasedMs).toBeGreaterThanOrEqual(0);
    expect(first?.budgetMs).toBeCloseTo(((100_000 - (first?.releasedMs ?? 0)) * tbar(STEP.retriever)) / total, 1);
    expect(first?.deadlineMs).toBeCloseTo((first?.releasedMs ?? 0) + (first?.budgetMs ?? 0), 1);
  });

  it.each([
    ["malformed JSON", "{not json"],
    ["an unknown field", JSON.stringify({ kind: "replay", calls: CALLS, extra: 1 })],
    ["a negative token count", JSON.stringify({ kind: "replay", calls: [{ step: "x", inputTokens: -1, outputTokens: 1 }] })],
    ["no calls", JSON.stringify({ kind: "replay", calls: [] })],
    ["an unknown kind", JSON.stringify({ kind: "magic", calls: CALLS })],
  ])("rejects %s with 400 and dispatches nothing", async (_what, body) => {
    const spy = fakeVllm();
    const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    const pool = (await (await admin("/pools/default", "GET")).json()) as { instances: { queued: number; running: number }[] };
    expect(pool.instances.every((i) => i.queued === 0 && i.running === 0)).toBe(true);
    expect(spy).not.toHaveBeenCalled();
  });

  it("answers an unknown or malformed workflow id with 404", async () => {
    for (const id of ["wf_00000000000000000000000000000000", "nope"]) {
      for (const method of ["GET", "DELETE"]) {
        const res = await api(`/v1/workflows/${id}`, { method });
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
      }
    }
  });

  it("fails a workflow with the upstream's reason when vLLM refuses a call", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () =>
      Response.json({ error: { message: "This model's maximum context length is 8192 tokens", type: "BadRequestError", param: null, code: 400 } }, { status: 400 }),
    );
    const { id } = (await (await submit({ kind: "replay", calls: CALLS })).json()) as { id: string };
    const v = (await finished(id)) as View & { error: { code: string; message: string } };
    expect(v.status).toBe("failed");
    expect(v.error.message).toMatch(/maximum context length/);
  });

  it("retries a call once when the connection to vLLM fails before any response, and sends it to another instance after a second loss", async () => {
    let attempts = 0;
    let lose = new Set([1, 3]);
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      if (isProbe(input)) return new Response(null);
      attempts += 1;
      sent.push(String(input));
      if (lose.has(attempts)) throw new TypeError("Network connection lost.");
      const headers = new Headers(init?.headers);
      return sseCompletion(Number(headers.get("x-hexflow-prompt-tokens") ?? 1), Number(headers.get("x-hexflow-output-tokens") ?? 1));
    });
    const ok = (await (await submit({ kind: "replay", calls: CALLS })).json()) as { id: string };
    expect((await finished(ok.id)).status).toBe("succeeded");
    // Four calls, two of them sent twice by the upstream client itself.
    expect(attempts).toBe(CALLS.length + 2);
    attempts = 0;
    sent.length = 0;
    lose = new Set([1, 2]);
    const moved = (await (await submit({ kind: "replay", calls: CALLS })).json()) as { id: string };
    const v = (await finished(moved.id)) as View & { stages: { calls: { failures: { instanceId: string; code: string }[] }[] }[] };
    expect(v.status).toBe("succeeded");
    // The first call lost both connections on one server, then ran on the other (core/call-retry).
    const first = v.stages[0]?.calls[0];
    expect(first?.failures).toEqual([expect.objectContaining({ code: "upstream_unreachable" })]);
    expect(first?.instance).not.toBe(first?.failures[0]?.instanceId);
    expect(new URL(sent[2] ?? "").port).not.toBe(new URL(sent[0] ?? "").port);
  });

  it("cancels: queued calls leave their instance and the pool's load", async () => {
    // vLLM never answers: the first calls occupy the instance, the rest stay queued.
    vi.spyOn(globalThis, "fetch").mockImplementation(() => new Promise<Response>(() => {}));
    await admin("/pools/default/instances/a100-0", "PATCH", { maxConcurrency: 1 });
    await admin("/pools/default/instances/l40s-1/drain", "POST");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await submit({ kind: "replay", calls: CALLS })).json()) as { id: string }).id);
    const stub = env.GPU_INSTANCE.getByName("default/a100-0");
    expect(await stub.stats()).toMatchObject({ queued: 2, running: 1 });
    const last = ids[2] ?? "";
    const res = await api(`/v1/workflows/${last}`, { method: "DELETE" });
    expect(await res.json()).toEqual({ id: last, status: "cancelled" });
    expect(await stub.stats()).toMatchObject({ queued: 1, running: 1 });
    expect((await api(`/v1/workflows/${last}`, { method: "DELETE" })).status).toBe(409);
    const pool = (await (await admin("/pools/default", "GET")).json()) as { instances: { id: string; queued: number; running: number }[] };
    expect(pool.instances.find((i) => i.id === "a100-0")).toMatchObject({ queued: 1, running: 1 });
  });
});

describe("custom DAG workflows", () => {
  it("runs the stages in dependency order, each prompt rendered from the outputs before it", async () => {
    const prompts: string[] = [];
    let n = 0;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      const body = JSON.parse(String(init?.body ?? "{}")) as { prompt: string; max_tokens: number };
      prompts.push(body.prompt);
      n += 1;
      // The answer names the call, so later prompts show which outputs they were given.
      const text = `answer${n}`;
      const events = [
        { id: "cmpl-1", object: "text_completion", choices: [{ index: 0, text, finish_reason: "stop" }] },
        { id: "cmpl-1", object: "text_completion", choices: [], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } },
      ];
      return new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } });
    });
    const res = await submit({
      kind: "dag",
      inputs: { question: "Which store sold most?" },
      stages: [
        { id: "judge", after: ["draft"], prompt: "Pick one of:\n{{stages.draft.outputs}}", maxTokens: 8 },
        { id: "plan", prompt: "Plan: {{inputs.question}}", maxTokens: 16 },
        { id: "draft", after: ["plan"], prompt: "Draft {{fanout.index}} from {{stages.plan.output}}", fanOut: 2, maxTokens: 32 },
      ],
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const v = await finished(id);
    expect(v.status).toBe("succeeded");
    expect(v.stages.map((s) => [s.step, s.calls.length])).toEqual([["dag:plan", 1], ["dag:draft", 2], ["dag:judge", 1]]);
    expect(prompts[0]).toBe("Plan: Which store sold most?");
    expect(prompts.slice(1, 3).sort()).toEqual(["Draft 0 from answer1", "Draft 1 from answer1"]);
    expect(prompts[3]).toMatch(/^Pick one of:\n1\. answer[23]\n2\. answer[23]$/);
    expect(v.stages.at(-1)?.calls[0]?.output).toBe("answer4");
  });

  it("refuses an invalid DAG with 400 naming the stage, and starts nothing", async () => {
    const spy = fakeVllm();
    const res = await submit({ kind: "dag", stages: [{ id: "a", after: ["b"], prompt: "x", maxTokens: 4 }, { id: "b", after: ["a"], prompt: "y", maxTokens: 4 }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "invalid_request", message: "stages form a cycle: a -> b -> a" } });
    const unknown = await submit({ kind: "dag", stages: [{ id: "a", prompt: "{{inputs.q}}", maxTokens: 4 }] });
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe('stage "a": prompt references unknown input "q"');
    expect(spy).not.toHaveBeenCalled();
  });
});
