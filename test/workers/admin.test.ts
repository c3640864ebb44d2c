import { afterEach, describe, expect, it } from "vitest";
import { reset } from "cloudflare:test";
import { admin, api } from "./helpers";

afterEach(async () => reset());

const A100 = { id: "a100-0", url: "http://127.0.0.1:9", gpu: "A100", timeScale: 20 };

describe("admin routes", () => {
  it("require the admin credential and reveal nothing without it", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong-token-wrong-token" }, { authorization: "Basic abc" }];
    for (const headers of attempts) {
      const res = await api("/admin/pools/default", { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: "unauthorized", message: "admin credential required" } });
    }
  });

  it("registers, updates, drains and removes instances", async () => {
    const created = await admin("/pools/default/instances", "POST", A100);
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ id: "a100-0", gpu: "A100", state: "active", kvTokens: 400000, maxConcurrency: 256, timeScale: 20 });
    expect((await admin("/pools/default/instances/a100-0", "PATCH", { maxConcurrency: 8 })).status).toBe(200);
    expect(await (await admin("/pools/default/instances/a100-0/drain", "POST")).json()).toMatchObject({ state: "draining", maxConcurrency: 8 });
    const pool = await (await admin("/pools/default", "GET")).json();
    expect(pool).toMatchObject({ policy: "hexgen", timeScale: 20, instances: [{ id: "a100-0", state: "draining" }] });
    expect((await admin("/pools/default/instances/a100-0", "DELETE")).status).toBe(200);
    expect(await (await admin("/pools/default", "GET")).json()).toMatchObject({ instances: [] });
  });

  it.each([
    ["an unknown GPU type", { ...A100, gpu: "TPU" }],
    ["an unknown field", { ...A100, color: "red" }],
    ["a bad url", { ...A100, url: "ftp://x" }],
    ["a negative concurrency", { ...A100, maxConcurrency: -1 }],
  ])("rejects %s with 400 and registers nothing", async (_what, body) => {
    const res = await admin("/pools/default/instances", "POST", body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "invalid_request" } });
    expect(await (await admin("/pools/default", "GET")).json()).toMatchObject({ instances: [] });
  });

  it("answers malformed JSON, duplicates, unknown instances and mixed time scales with JSON errors", async () => {
    const bad = await api("/admin/pools/default/instances", { method: "POST", headers: { authorization: "Bearer test-admin-token-0123456789" }, body: "{nope" });
    expect(bad.status).toBe(400);
    expect(await admin("/pools/default/instances", "POST", A100)).toHaveProperty("status", 201);
    expect((await admin("/pools/default/instances", "POST", A100)).status).toBe(409);
    expect((await admin("/pools/default/instances", "POST", { ...A100, id: "a100-1", timeScale: 1 })).status).toBe(409);
    expect((await admin("/pools/default/instances/nope", "PATCH", { maxConcurrency: 2 })).status).toBe(404);
    expect((await admin("/pools/default/instances/nope", "DELETE")).status).toBe(404);
  });

  it("switches the pool's policy and α at runtime and versions α", async () => {
    await admin("/pools/default/instances", "POST", A100);
    const res = await admin("/pools/default/policy", "PUT", { policy: "edf", alpha: 0.3 });
    expect(await res.json()).toMatchObject({ policy: "edf", alpha: 0.3, alphaVersion: 2 });
    const bad = await admin("/pools/default/policy", "PUT", { policy: "fastest" });
    expect(bad.status).toBe(400);
    expect(await (await admin("/pools/default", "GET")).json()).toMatchObject({ policy: "edf", alphaVersion: 2 });
  });
});
