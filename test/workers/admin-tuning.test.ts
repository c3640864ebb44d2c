import { env } from "cloudflare:workers";
import { reset } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { adminTuning } from "../../src/api/admin-tuning";
import { insertDecision, type NewDecision } from "../../src/db/tuning-decisions";
import { admin, api } from "./helpers";

afterEach(async () => reset());

const A100 = { id: "a100-0", url: "http://127.0.0.1:9", gpu: "A100", timeScale: 20 };

function decision(atMs: number, over: Partial<NewDecision> = {}): NewDecision {
  return {
    pool: "default", atMs, reason: "cron", windowStartS: 10, windowEndS: 100, workflows: 120, arrivalRate: 1.2, currentAlpha: 0.7,
    bestAlpha: 0.4, gain: 0.12, installed: true, alphaVersion: 3, skipped: null, cpuMs: 850,
    curve: [{ alpha: 0.4, p95S: 30, attainment: 0.9 }, { alpha: 0.7, p95S: 34, attainment: 0.85 }], ...over,
  };
}

describe("α tuning admin routes", () => {
  it("need the admin credential", async () => {
    for (const [path, method] of [["/admin/pools/default/tuning", "GET"], ["/admin/pools/default/tune", "POST"]] as const) {
      const res = await api(path, { method });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: "unauthorized", message: "admin credential required" } });
    }
  });

  it("show the decision history, newest first, curves parsed, per pool", async () => {
    await insertDecision(env.TRACES, decision(1000));
    await insertDecision(env.TRACES, decision(3000, { installed: false, gain: null, bestAlpha: null, skipped: "too few workflows (3 < 50)", curve: [], workflows: 3 }));
    await insertDecision(env.TRACES, decision(2000, { pool: "other" }));
    const res = await admin("/pools/default/tuning", "GET");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { pool: string; decisions: { atMs: number; installed: boolean; skipped: string | null; curve: unknown[] }[] };
    expect(body.pool).toBe("default");
    expect(body.decisions.map((d) => d.atMs)).toEqual([3000, 1000]);
    expect(body.decisions[0]).toMatchObject({ installed: false, skipped: "too few workflows (3 < 50)", curve: [] });
    expect(body.decisions[1]).toMatchObject({ installed: true, gain: 0.12, bestAlpha: 0.4, curve: [{ alpha: 0.4, p95S: 30, attainment: 0.9 }, { alpha: 0.7, p95S: 34, attainment: 0.85 }] });
    const one = (await (await admin("/pools/default/tuning?limit=1", "GET")).json()) as { decisions: unknown[] };
    expect(one.decisions).toHaveLength(1);
    expect((await admin("/pools/default/tuning?limit=0", "GET")).status).toBe(400);
  });

  it("answer 503 with a JSON error when the tuner Worker is not there", async () => {
    const res = await admin("/pools/default/tune", "POST");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: "unavailable" } });
  });

  it("forward a tuning to the tuner with the admin token and pass its answer or its error on", async () => {
    const seen: { url: string; auth: string | null }[] = [];
    const fakeTuner = (answer: () => Response) =>
      ({
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          seen.push({ url: String(input), auth: new Headers(init?.headers).get("authorization") });
          return answer();
        },
      }) as unknown as Fetcher;
    const ask = (tuner: Fetcher) => adminTuning.request("/pools/blue/tune", { method: "POST" }, { ...env, TUNER: tuner });
    const ok = await ask(fakeTuner(() => Response.json({ id: 7, pool: "blue", installed: true })));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: 7, pool: "blue", installed: true });
    expect(seen[0]).toEqual({ url: "https://hexflow-tuner/tune?pool=blue&reason=manual", auth: "Bearer test-admin-token-0123456789" });
    const refused = await ask(fakeTuner(() => Response.json({ error: { code: "unauthorized", message: "admin credential required" } }, { status: 401 })));
    expect(refused.status).toBe(401);
    const down = await ask(fakeTuner(() => new Response("no such service", { status: 503 })));
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error: { code: "unavailable" } });
    const broken = await ask(
      fakeTuner(() => {
        throw new Error("connection refused");
      }),
    );
    expect(await broken.json()).toMatchObject({ error: { code: "unavailable", message: expect.stringMatching(/connection refused/) } });
  });

  it("pin α through the policy route, which makes the coordinator refuse the tuner's α", async () => {
    await admin("/pools/default/instances", "POST", A100);
    const coordinator = env.COORDINATOR.getByName("default");
    const before = await coordinator.tuningContext();
    expect(before).toMatchObject({ pool: "default", policy: "hexgen", alpha: 0.7, pinned: false, instances: [{ id: "a100-0" }] });
    const installed = await coordinator.installAlpha(0.4, before.alphaVersion);
    expect(installed).toEqual({ ok: true, value: { alphaVersion: before.alphaVersion + 1 } });
    // The tuner tuned against a version that is no longer current: refused.
    expect(await coordinator.installAlpha(0.5, before.alphaVersion)).toMatchObject({ ok: false, error: { code: "conflict" } });

    const pinned = await admin("/pools/default/policy", "PUT", { alpha: 0.6, pinned: true });
    expect(await pinned.json()).toMatchObject({ alpha: 0.6, pinned: true });
    const ctx = await coordinator.tuningContext();
    expect(await coordinator.installAlpha(0.2, ctx.alphaVersion)).toMatchObject({ ok: false, error: { code: "conflict", message: expect.stringMatching(/pinned/) } });
    expect(await (await admin("/pools/default", "GET")).json()).toMatchObject({ alpha: 0.6, pinned: true });

    await admin("/pools/default/policy", "PUT", { pinned: false });
    const unpinned = await coordinator.tuningContext();
    expect(await coordinator.installAlpha(0.2, unpinned.alphaVersion)).toMatchObject({ ok: true });
    expect(await coordinator.installAlpha(1.5, unpinned.alphaVersion + 1)).toMatchObject({ ok: false, error: { code: "invalid_request" } });
  });
});
