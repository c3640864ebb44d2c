/**
 * `Idempotency-Key` on POST /v1/workflows (src/api/workflows.ts, src/objects/idempotency-store.ts): a repeat
 * replays the first start and takes nothing again, another body under the key is 422, a refused start frees
 * the key, keys are per tenant, and a claim left pending by a Worker that died is taken over with its id.
 */
import { reset, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { requestFingerprint } from "../../src/api/workflows";
import { LIMITS } from "../../src/core/limits";
import { admin, api, fakeVllm } from "./helpers";
import { createTenant, postJson, REPLAY, registerPool } from "./security-helpers";
import { TEST_TENANT_ID } from "./tenant-fixture";

interface Accepted {
  id: string;
  status: string;
  sloMs: number;
  bestEffort: boolean;
  links: { self: string };
}

const start = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

const keyed = (key: string, body: unknown = REPLAY): Promise<Response> => start(body, { "idempotency-key": key });

async function accepted(res: Response): Promise<Accepted> {
  expect(res.status).toBe(202);
  return (await res.json()) as Accepted;
}

async function expectError(res: Response, status: number, code: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(await res.json()).toMatchObject({ error: { code, message: expect.any(String) } });
}

/** The workflows the tenant's index holds: one per started workflow (a refused start leaves none). */
const indexed = (tenantId: string): Promise<number> =>
  runInDurableObject(env.TENANT.getByName(tenantId), (_obj, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM workflows").one().n);

/** Runs SQL on the tenant's idempotency table, as a Worker dying (or time passing) would leave it. */
const tamper = (tenantId: string, sql: string, ...args: (string | number)[]): Promise<void> =>
  runInDurableObject(env.TENANT.getByName(tenantId), (_obj, state) => void state.storage.sql.exec(sql, ...args));

async function usage(tenantId: string): Promise<{ tokens: number; running: number }> {
  return ((await (await admin(`/tenants/${tenantId}`, "GET")).json()) as { usage: { tokens: number; running: number } }).usage;
}

/** A tenant whose bucket barely refills, so its token count says how many starts were counted. */
async function countingTenant(name: string, config: Record<string, unknown> = {}) {
  return createTenant(name, { quota: { workflowsPerS: 0.0001, burst: 5, maxConcurrent: 100 }, ...config });
}

beforeEach(registerPool);
afterEach(async () => {
  vi.restoreAllMocks();
  await reset();
});

describe("Idempotency-Key on POST /v1/workflows", () => {
  it("replays a repeated request: the same workflow, counted and started once", async () => {
    fakeVllm();
    const t = await countingTenant("replays");
    const first = await postJson(t.key, "/v1/workflows", REPLAY, { "idempotency-key": "order-42" });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const a = await accepted(first);
    const second = await postJson(t.key, "/v1/workflows", REPLAY, { "idempotency-key": "order-42" });
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    const b = await accepted(second);
    expect(b).toMatchObject({ id: a.id, sloMs: a.sloMs, bestEffort: a.bestEffort, links: { self: `/v1/workflows/${a.id}` } });
    expect(await indexed(t.tenant.id)).toBe(1);
    expect((await usage(t.tenant.id)).tokens).toBeCloseTo(4, 1);
    // Without the key the same body is a new workflow.
    const c = await accepted(await postJson(t.key, "/v1/workflows", REPLAY));
    expect(c.id).not.toBe(a.id);
    expect(await indexed(t.tenant.id)).toBe(2);
  });

  it("answers 422 idempotency_key_reused for another body under the key, and changes nothing", async () => {
    fakeVllm();
    const a = await accepted(await keyed("k-mismatch"));
    await expectError(await keyed("k-mismatch", { ...REPLAY, sloScale: 7 }), 422, "idempotency_key_reused");
    // Byte for byte: the same JSON spelled differently is another request.
    await expectError(await keyed("k-mismatch", JSON.stringify(REPLAY, null, 2)), 422, "idempotency_key_reused");
    expect(await indexed(TEST_TENANT_ID)).toBe(1);
    const again = await keyed("k-mismatch");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await accepted(again)).id).toBe(a.id);
  });

  it("frees the key when the start is refused (400 SLO, 404 database, 429 quota), so a later request starts", async () => {
    fakeVllm();
    const t = await createTenant("refused", { slo: { defaultScale: 5, minScale: 2, maxScale: 10 }, quota: { workflowsPerS: 0.0001, burst: 1, maxConcurrent: 100 } });
    const post = (body: unknown) => postJson(t.key, "/v1/workflows", body, { "idempotency-key": "retry-me" });
    await expectError(await post({ ...REPLAY, sloScale: 1 }), 400, "slo_out_of_range");
    await expectError(await post({ kind: "text2sql", database: "nowhere", question: "how many?" }), 404, "not_found");
    // Spend the only token, then the keyed request is over the quota.
    await accepted(await postJson(t.key, "/v1/workflows", REPLAY));
    const limited = await post(REPLAY);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectError(limited, 429, "rate_limited");
    expect(await indexed(t.tenant.id)).toBe(1);

    expect((await admin(`/tenants/${t.tenant.id}`, "PATCH", { quota: { workflowsPerS: 100, burst: 10, maxConcurrent: 100 } })).status).toBe(200);
    const ok = await post(REPLAY);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
    const started = await accepted(ok);
    expect(await indexed(t.tenant.id)).toBe(2);
    expect((await accepted(await post(REPLAY))).id).toBe(started.id);
  });

  it("forgets a key 24 h after its first use", async () => {
    fakeVllm();
    const a = await accepted(await keyed("old-key"));
    await tamper(TEST_TENANT_ID, "UPDATE idempotency SET created_at_ms = created_at_ms - ?, updated_at_ms = updated_at_ms - ? WHERE key = ?", 86_400_001, 86_400_001, "old-key");
    const reused = await keyed("old-key", { ...REPLAY, sloScale: 7 });
    expect(reused.headers.get("idempotent-replayed")).toBeNull();
    expect((await accepted(reused)).id).not.toBe(a.id);
    // The expired row was pruned and replaced: one row, the new one.
    const rows = await runInDurableObject(env.TENANT.getByName(TEST_TENANT_ID), (_obj, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM idempotency").one().n);
    expect(rows).toBe(1);
  });

  it("scopes keys to the tenant: two tenants' equal keys start two workflows", async () => {
    fakeVllm();
    const t = await createTenant("other");
    const mine = await keyed("shared-key");
    const theirs = await postJson(t.key, "/v1/workflows", REPLAY, { "idempotency-key": "shared-key" });
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect((await accepted(theirs)).id).not.toBe((await accepted(mine)).id);
    expect(await indexed(TEST_TENANT_ID)).toBe(1);
    expect(await indexed(t.tenant.id)).toBe(1);
  });

  it("refuses a malformed key with 400 invalid_request before anything is claimed or started", async () => {
    fakeVllm();
    const max = LIMITS.idempotency.maxKeyChars;
    for (const bad of ["", "a b", "a\tb", "k".repeat(max + 1), "caf\u00e9", "a\u007fb"]) {
      await expectError(await keyed(bad), 400, "invalid_request");
    }
    expect(await indexed(TEST_TENANT_ID)).toBe(0);
    // The longest allowed key is a key.
    await accepted(await keyed("k".repeat(max)));
    expect(await indexed(TEST_TENANT_ID)).toBe(1);
  });

  it("answers 409 with Retry-After while a claim is fresh, and takes over a stale one with its workflow id", async () => {
    fakeVllm();
    const body = JSON.stringify(REPLAY);
    const planted = `wf_${"ab".repeat(16)}`;
    const sha = await requestFingerprint(await new Response(body).arrayBuffer());
    // A request claimed the key and its Worker died before starting anything.
    const claim = await env.TENANT.getByName(TEST_TENANT_ID).claimIdempotency("dying", sha, planted);
    expect(claim).toEqual({ kind: "fresh", workflowId: planted });

    const busy = await keyed("dying", body);
    expect(busy.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    await expectError(busy, 409, "idempotency_in_progress");
    expect(await indexed(TEST_TENANT_ID)).toBe(0);

    await tamper(TEST_TENANT_ID, "UPDATE idempotency SET updated_at_ms = updated_at_ms - 31000 WHERE key = ?", "dying");
    const takeover = await keyed("dying", body);
    expect(takeover.headers.get("idempotent-replayed")).toBeNull();
    expect((await accepted(takeover)).id).toBe(planted);
    expect(await indexed(TEST_TENANT_ID)).toBe(1);
    const replay = await keyed("dying", body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await accepted(replay)).id).toBe(planted);
  });

  it("takes over a stale claim whose workflow did start: it is replayed, not started or counted again", async () => {
    fakeVllm();
    const t = await countingTenant("died-after-start");
    const post = () => postJson(t.key, "/v1/workflows", REPLAY, { "idempotency-key": "late" });
    const a = await accepted(await post());
    // The Worker died between the start and marking the key started.
    await tamper(t.tenant.id, "UPDATE idempotency SET state = 'pending', updated_at_ms = updated_at_ms - 31000 WHERE key = ?", "late");
    const again = await post();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await accepted(again)).id).toBe(a.id);
    expect(await indexed(t.tenant.id)).toBe(1);
    expect((await usage(t.tenant.id)).tokens).toBeCloseTo(4, 1);
  });

  it("starts one workflow for two racing requests with one key", async () => {
    fakeVllm();
    const answers = await Promise.all([keyed("race"), keyed("race"), keyed("race")]);
    const ids = new Set<string>();
    for (const res of answers) {
      if (res.status === 409) {
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        await expectError(res, 409, "idempotency_in_progress");
      } else {
        ids.add((await accepted(res)).id);
      }
    }
    expect(ids.size).toBe(1);
    expect(await indexed(TEST_TENANT_ID)).toBe(1);
  });

  it("is ignored by other routes", async () => {
    fakeVllm();
    const res = await api("/v1/completions", { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "not a valid key" }, body: JSON.stringify({ prompt: "hi", max_tokens: 4 }) });
    expect(res.status).toBe(200);
  });

  it("is in the OpenAPI document: the header, 409 with Retry-After, 422", async () => {
    const doc = (await (await api("/openapi.json")).json()) as {
      paths: Record<string, { post?: { parameters?: { name: string; in: string; schema?: { maxLength?: number } }[]; responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    const op = doc.paths["/v1/workflows"]?.post;
    const header = op?.parameters?.find((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key");
    expect(header?.schema?.maxLength).toBe(LIMITS.idempotency.maxKeyChars);
    expect(Object.keys(op?.responses["409"]?.headers ?? {})).toContain("Retry-After");
    expect(op?.responses["422"]).toBeDefined();
    expect(Object.keys(op?.responses["202"]?.headers ?? {})).toContain("Idempotent-Replayed");
  });
});
