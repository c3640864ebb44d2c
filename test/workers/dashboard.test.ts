import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { insertDecision } from "../../src/db/tuning-decisions";
import { admin, ADMIN, api, fakeVllm, isProbe, until, poolPerTest, TWO_GPU_POOL, HEAVY_REPLAY } from "./helpers";

const POOL = TWO_GPU_POOL;
const CALLS = HEAVY_REPLAY.slice(0, 3);

interface DashboardBody {
  pool: string;
  nowMs: number;
  view: { alpha: number; instances: { id: string; gpu: string; health: { status: string } }[] };
  series: { points: { atMs: number; ended: number; p95S: number | null; attainment: number | null; throughputPerS: number }[]; stepS: number };
  tuning: { atMs: number; bestAlpha: number | null; installed: boolean; curve?: unknown }[];
  recent: { id: string; status: string; calls: { instance: string; step: string; releasedS: number; startedS: number | null; finishedS: number | null }[] }[];
}

async function runTraced(expected: "succeeded" | "failed"): Promise<string> {
  const res = await api("/v1/workflows", { method: "POST", headers: { "content-type": "application/json", prefer: "wait=10" }, body: JSON.stringify({ kind: "replay", calls: CALLS, sloMs: 200_000 }) });
  const v = (await res.json()) as { id: string; status: string };
  expect(v.status, JSON.stringify(v)).toBe(expected);
  await runDurableObjectAlarm(env.WORKFLOW.getByName(v.id));
  await until(async () => (await env.TRACES.prepare("SELECT 1 AS x FROM workflow_traces WHERE workflow_id = ?").bind(v.id).first()) ?? undefined);
  return v.id;
}

const dashboard = (query = ""): Promise<Response> => api(`/admin/pools/default/dashboard${query}`, { headers: ADMIN });

poolPerTest(POOL);

describe("GET /admin/pools/:pool/dashboard", () => {
  it("needs the admin credential and checks its query", async () => {
    const anon = await api("/admin/pools/default/dashboard");
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ error: { code: "unauthorized" } });
    for (const q of ["?windowS=5", "?stepS=0", "?recent=51", "?bogus=1"]) {
      const res = await dashboard(q);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
  });

  it("shows the instances, the series of ended workflows, α decisions and call timelines", async () => {
    const vllm = fakeVllm();
    const empty = (await (await dashboard()).json()) as DashboardBody;
    expect(empty.recent).toEqual([]);
    expect(empty.series.points.every((p) => p.ended === 0 && p.p95S === null)).toBe(true);

    // One met SLO, then one failure (vLLM refuses the first call with a 400, which is not retried): a missed SLO.
    const met = await runTraced("succeeded");
    vllm.mockImplementation(async (input) => (isProbe(input) ? new Response(null, { status: 200 }) : Response.json({ object: "error", message: "bad request", code: 400 }, { status: 400 })));
    const missed = await runTraced("failed");
    await insertDecision(env.TRACES, { pool: "default", atMs: Date.now() - 1000, reason: "manual", windowStartS: 0, windowEndS: 10, workflows: 2, arrivalRate: 0.1, currentAlpha: 0.7, bestAlpha: 0.55, gain: 0.1, installed: true, alphaVersion: 2, skipped: null, curve: [{ alpha: 0.55, p95S: 1, attainment: 1 }], cpuMs: 3 });

    const res = await dashboard("?windowS=120&stepS=5&spanS=600");
    expect(res.status).toBe(200);
    const d = (await res.json()) as DashboardBody;
    expect(d.view.instances.map((i) => [i.id, i.gpu, i.health.status])).toEqual([["a100-0", "A100", "healthy"], ["l40s-1", "L40S", "healthy"]]);
    const last = d.series.points.at(-1);
    expect(last?.atMs).toBe(d.nowMs);
    expect(last?.ended).toBe(2);
    expect(last?.attainment).toBe(0.5);
    expect(last?.p95S).toBeGreaterThan(0);
    expect(last?.throughputPerS).toBeCloseTo(1 / 600, 9);
    expect(d.series.points[1]?.atMs).toBe((d.series.points[0]?.atMs ?? 0) + 5000);
    expect(d.tuning).toHaveLength(1);
    expect(d.tuning[0]).toMatchObject({ bestAlpha: 0.55, installed: true });
    expect(d.tuning[0]?.curve).toBeUndefined();

    expect(d.recent.map((w) => w.id)).toEqual([missed, met]);
    for (const w of d.recent) {
      // The failed one ended at its first call.
      expect(w.calls.map((c) => c.step)).toEqual(CALLS.slice(0, w.id === met ? CALLS.length : 1).map((c) => c.step));
      for (const c of w.calls) {
        expect(POOL.map((i) => i.id)).toContain(c.instance);
        expect(c.releasedS).toBeGreaterThanOrEqual(0);
        if (w.id === met) expect(c.finishedS ?? -1).toBeGreaterThanOrEqual(c.startedS ?? Infinity);
      }
    }
    const one = (await (await dashboard("?recent=1")).json()) as DashboardBody;
    expect(one.recent.map((w) => w.id)).toEqual([missed]);
  });

  it("serves the page and its bundled script without a CDN", async () => {
    // Static assets are served before the Worker runs; the binding reaches them the same way.
    const page = await env.ASSETS.fetch("http://gateway.test/dashboard");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<script src="/assets/dashboard.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
  });
});
