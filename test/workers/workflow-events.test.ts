/**
 * Issue 9, progress events: GET /v1/workflows/:id/events streams a workflow's stage releases, call dispatches
 * and ends, failovers, text2sql self-correction rounds and its end as Server-Sent Events, replayed from
 * storage after Last-Event-ID and then live, closed after workflow_done.
 */
import { env, exports } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newWorkflowId } from "../../src/api/workflow-ids";
import { STEP } from "../../src/core/chess";
import type { WorkflowEventData } from "../../src/core/workflow-events";
import { text2sqlAnswer } from "../../src/emulator/text2sql/answer";
import { admin, api, hintedCompletion, isProbe, submitReplay, TWO_GPU_POOL, LIGHT_REPLAY } from "./helpers";
import { asKey, createTenant } from "./security-helpers";
import { TEST_TENANT_ID } from "./tenant-fixture";

const POOL = TWO_GPU_POOL;
const REPLAY = LIGHT_REPLAY;

interface Frame { id?: number; event?: string; data?: WorkflowEventData; comment?: string; retry?: number }
type Event = { id: number; data: WorkflowEventData };

function parseFrame(block: string): Frame {
  const f: Frame = {};
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) f.comment = line.slice(1).trim();
    else if (line.startsWith("id: ")) f.id = Number(line.slice(4));
    else if (line.startsWith("event: ")) f.event = line.slice(7);
    else if (line.startsWith("data: ")) f.data = JSON.parse(line.slice(6)) as WorkflowEventData;
    else if (line.startsWith("retry: ")) f.retry = Number(line.slice(7));
  }
  return f;
}

/** Reads frames until the server closes the stream (closed: true) or `enough` says so (the reader is cancelled then). */
async function readFrames(stream: ReadableStream<Uint8Array> | null, enough: (frames: Frame[]) => boolean = () => false, timeoutMs = 15_000): Promise<{ frames: Frame[]; closed: boolean }> {
  if (stream === null) throw new Error("no body");
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const frames: Frame[] = [];
  let buffer = "";
  const end = Date.now() + timeoutMs;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`stream stalled; got ${JSON.stringify(frames)}`)), Math.max(1, end - Date.now()))));
    const { value, done } = await Promise.race([reader.read(), timeout]).finally(() => timer !== undefined && clearTimeout(timer));
    if (done) return { frames, closed: true };
    buffer += decoder.decode(value, { stream: true });
    for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
      frames.push(parseFrame(buffer.slice(0, cut)));
      buffer = buffer.slice(cut + 2);
    }
    if (enough(frames)) {
      await reader.cancel();
      return { frames, closed: false };
    }
  }
}

const eventsOf = (frames: Frame[]): Event[] => frames.flatMap((f) => (f.id !== undefined && f.data !== undefined ? [{ id: f.id, data: f.data }] : []));

async function subscribe(id: string, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return api(`/v1/workflows/${id}/events${query}`, { headers });
}

async function streamAll(id: string, headers: Record<string, string> = {}, query = ""): Promise<{ events: Event[]; frames: Frame[] }> {
  const res = await subscribe(id, headers, query);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const { frames, closed } = await readFrames(res.body);
  expect(closed).toBe(true);
  return { events: eventsOf(frames), frames };
}

function expectConsecutive(events: Event[], from: number): void {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => from + i));
  // The SSE event name is the data's type.
  for (const e of events) expect(e.data.type.length).toBeGreaterThan(0);
}

async function registerPool(): Promise<void> {
  for (const i of POOL) expect((await admin("/pools/default/instances", "POST", i)).status).toBe(201);
  // Health is tested elsewhere: here a failed call is retried, never the instance excluded.
  expect((await admin("/pools/default/policy", "PUT", { health: { unhealthyAfter: 100 } })).status).toBe(200);
}

afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("a text2sql workflow's events", () => {
  const SHOP = [
    "CREATE TABLE stores (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL)",
    "INSERT INTO stores VALUES (1, 'Velo Nord', 'Hamburg'), (2, 'Velo Sud', 'Munich'), (3, 'Velo West', 'Cologne')",
  ];

  function sseChat(text: string): Response {
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
    const events = [chunk({ role: "assistant", content: text }, "stop"), { id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }];
    return new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } });
  }

  it("streams every stage in order, each call dispatched before it finished, the correction round between its stages, and ends with workflow_done", async () => {
    for (const s of SHOP) await env.DEMO_DB.prepare(s).run();
    await registerPool();
    expect((await api("/v1/databases", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "shop", target: { kind: "d1", binding: "DEMO_DB" } }) })).status).toBe(201);
    // The candidate names a column that does not exist; the revise round fixes it.
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      const body = JSON.parse(String(init?.body ?? "{}")) as { messages?: { content: string }[] };
      const prompt = body.messages?.[0]?.content ?? "";
      const step = (prompt.split("\n")[0] ?? "").replace("### hexflow-task:", "").trim();
      if (step === STEP.candidate) return sseChat("```sql\nSELECT nme FROM stores\n```");
      if (step === STEP.revise) return sseChat("```sql\nSELECT name FROM stores ORDER BY name\n```");
      return sseChat(text2sqlAnswer(prompt, 7, 0) ?? "");
    });
    const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ kind: "text2sql", database: "shop", question: "List the store names.", candidates: 1, maxRounds: 3, sloMs: 600_000 }) });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };

    const { events, frames } = await streamAll(id);
    await env.DEMO_DB.prepare("DROP TABLE IF EXISTS stores").run();
    expect(frames[0]?.retry).toBeGreaterThan(0);
    expect(frames.filter((f) => f.retry !== undefined)).toHaveLength(1);
    expectConsecutive(events, 1);
    const data = events.map((e) => e.data);

    const view = (await (await api(`/v1/workflows/${id}`)).json()) as { status: string; stages: { step: string; calls: { id: string }[] }[] };
    expect(view.status).toBe("succeeded");
    const released = data.flatMap((d) => (d.type === "stage_released" ? [d] : []));
    expect(released.map((d) => d.stage)).toEqual(view.stages.map((_, i) => i));
    expect(released.map((d) => d.step)).toEqual(view.stages.map((s) => s.step));
    for (const [i, s] of view.stages.entries()) expect(released[i]?.calls).toBe(s.calls.length);

    const at = (pred: (d: WorkflowEventData) => boolean): number => data.findIndex(pred);
    for (const [stage, s] of view.stages.entries()) {
      const release = at((d) => d.type === "stage_released" && d.stage === stage);
      const next = at((d) => d.type === "stage_released" && d.stage === stage + 1);
      for (const c of s.calls) {
        const dispatched = at((d) => d.type === "call_dispatched" && d.callId === c.id);
        const finished = at((d) => d.type === "call_finished" && d.callId === c.id);
        expect(dispatched).toBeGreaterThan(release);
        expect(finished).toBeGreaterThan(dispatched);
        if (next >= 0) expect(finished).toBeLessThan(next);
        expect(data[finished]).toMatchObject({ ok: true, dispatch: 0 });
        expect(data[dispatched]).toMatchObject({ step: s.step, stage, dispatch: 0 });
      }
    }

    const rounds = data.flatMap((d) => (d.type === "correction_round" ? [d] : []));
    expect(rounds).toEqual([expect.objectContaining({ round: 1, candidate: 0, status: "error", sql: "SELECT nme FROM stores", error: expect.stringMatching(/no such column: nme/) })]);
    const candidateStage = view.stages.findIndex((s) => s.step === STEP.candidate);
    const reviseStage = view.stages.findIndex((s) => s.step === STEP.revise);
    expect(reviseStage).toBe(candidateStage + 1);
    const round = at((d) => d.type === "correction_round");
    expect(round).toBeGreaterThan(at((d) => d.type === "call_finished" && d.callId === view.stages[candidateStage]?.calls[0]?.id));
    expect(round).toBeLessThan(at((d) => d.type === "stage_released" && d.stage === reviseStage));

    expect(data.at(-1)).toMatchObject({ type: "workflow_done", status: "succeeded", sloMet: true });
    const done = data.at(-1);
    if (done?.type !== "workflow_done") throw new Error("no workflow_done");
    expect(done.latencyS).toBeGreaterThan(0);
    expect(data.filter((d) => d.type === "workflow_done")).toHaveLength(1);
  });
});

describe("reconnecting", () => {
  it("gets exactly the missed suffix live after Last-Event-ID, keeps a quiet stream alive, and replays and closes after the end", async () => {
    await registerPool();
    let open = false;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      if (isProbe(input)) return new Response(null);
      // Held until the test has read the first events: the reconnect below happens while the workflow runs.
      while (!open) await new Promise((r) => setTimeout(r, 5));
      return hintedCompletion(new Headers(init?.headers));
    });
    const id = await submitReplay(REPLAY);

    const first = await readFrames((await subscribe(id)).body, (f) => eventsOf(f).some((e) => e.data.type === "call_dispatched"));
    expect(first.closed).toBe(false);
    const head = eventsOf(first.frames);
    expectConsecutive(head, 1);
    expect(head.map((e) => e.data.type)).toEqual(["stage_released", "call_dispatched"]);
    const lastId = head.at(-1)?.id ?? 0;

    // Nothing happens while the call is held: the stream sends only keep-alive comments.
    const rpc = await env.WORKFLOW.getByName(id).events(TEST_TENANT_ID, lastId, 20);
    if (!rpc.ok) throw new Error(rpc.error.message);
    const quiet = await readFrames(rpc.value.stream, (f) => f.filter((x) => x.comment === "keep-alive").length >= 2);
    expect(eventsOf(quiet.frames)).toEqual([]);

    const res = await subscribe(id, { "last-event-id": String(lastId) });
    open = true;
    const rest = await readFrames(res.body);
    expect(rest.closed).toBe(true);
    const tail = eventsOf(rest.frames);
    expectConsecutive(tail, lastId + 1);
    expect(tail.at(-1)?.data).toMatchObject({ type: "workflow_done", status: "succeeded" });

    // After the end: a full replay is what the two live streams saw together, and any suffix of it.
    const all = (await streamAll(id)).events;
    expect(all).toEqual([...head, ...tail]);
    expect(all.filter((e) => e.data.type === "stage_released")).toHaveLength(3);
    expect((await streamAll(id, { "last-event-id": "3" })).events).toEqual(all.slice(3));
    expect((await streamAll(id, {}, "?lastEventId=5")).events).toEqual(all.slice(5));
    // The header wins over the query.
    expect((await streamAll(id, { "last-event-id": "6" }, "?lastEventId=1")).events).toEqual(all.slice(6));
    // Nothing after workflow_done: 204, which tells an EventSource to stop reconnecting.
    const over = await subscribe(id, { "last-event-id": String(all.at(-1)?.id ?? 0) });
    expect(over.status).toBe(204);
  });
});

describe("refusals", () => {
  it("answers 401 without a key, 404 for another tenant's workflow as for a missing one, 400 for a bad Last-Event-ID", async () => {
    await registerPool();
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => (isProbe(input) ? new Response(null) : hintedCompletion(new Headers(init?.headers))));
    const id = await submitReplay(REPLAY);

    const anonymous = await exports.default.fetch(`http://gateway.test/v1/workflows/${id}/events`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("unauthorized");

    const other = await createTenant("other");
    const theirs = await asKey(other.key, `/v1/workflows/${id}/events`);
    const missing = await asKey(other.key, `/v1/workflows/${newWorkflowId()}/events`);
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).toBe(await missing.text());

    for (const bad of ["abc", "-1", "1.5", "1e3", "9".repeat(16)]) {
      const r = await subscribe(id, { "last-event-id": bad });
      expect(r.status, bad).toBe(400);
      expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_request", message: expect.stringMatching(/Last-Event-ID/) });
    }
    expect((await subscribe(id, {}, "?lastEventId=x")).status).toBe(400);
  });
});

describe("a failover's events", () => {
  it("shows call_failed, then a second call_dispatched of the same call on the other instance, then its end there", async () => {
    await registerPool();
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      if (isProbe(input)) return new Response(null);
      if (new URL(String(input)).port === "9001") return Response.json({ object: "error", message: "engine error", type: "Error", param: null, code: 500 }, { status: 500 });
      return hintedCompletion(new Headers(init?.headers));
    });
    // Dispatch decides where the first attempts go: a few workflows make one meet the faulty server.
    let found: { data: WorkflowEventData[]; callId: string } | undefined;
    for (let i = 0; i < 6 && found === undefined; i++) {
      const { events } = await streamAll(await submitReplay(REPLAY));
      const data = events.map((e) => e.data);
      expect(data.at(-1)).toMatchObject({ type: "workflow_done", status: "succeeded" });
      const failed = data.find((d) => d.type === "call_failed");
      if (failed?.type === "call_failed") found = { data, callId: failed.callId };
    }
    if (found === undefined) throw new Error("no call met the faulty server");
    const own = found.data.filter((d) => "callId" in d && d.callId === found.callId);
    expect(own).toEqual([
      expect.objectContaining({ type: "call_dispatched", instanceId: "a100-0", gpu: "A100", dispatch: 0 }),
      expect.objectContaining({ type: "call_failed", instanceId: "a100-0", dispatch: 0, willRetry: true, evacuated: false, error: expect.objectContaining({ code: "upstream_error" }) }),
      expect.objectContaining({ type: "call_dispatched", instanceId: "l40s-1", gpu: "L40S", dispatch: 1 }),
      expect.objectContaining({ type: "call_finished", instanceId: "l40s-1", dispatch: 1, ok: true }),
    ]);
  });
});
