import { env } from "cloudflare:workers";
import { applyD1Migrations, createScheduledController } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { getPolicy } from "../../src/core/policies";
import { listDecisions } from "../../src/db/tuning-decisions";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { scenarioBaseSlo, type Scenario } from "../../src/sim/scenario";
import { tuneAlpha } from "../../src/sim/tuner";
import { buildWorkload } from "../../src/sim/workload";
import type { TunerEnv } from "../../workers/tuner/env";
import worker, { tunePool } from "../../workers/tuner/index";
import { retried, tuningConfig } from "../../workers/tuner/tune";

// The pool's env is the tuner's (workers/tuner/wrangler.toml); the global Env type is the gateway's.
const tenv = env as unknown as TunerEnv;
const TOKEN = "test-admin-token-0123456789";
const MigrationsSchema = z.array(z.object({ name: z.string(), queries: z.array(z.string()) }));

// The tuner's defaults replay with seed 1 over the grid 0..1 step 0.05: the same as tuneAlpha here.
const N = 150;
const scenario: Scenario = { instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: N, rate: 1, sloScale: 5 };
const sloS = scenario.sloScale * scenarioBaseSlo(scenario);

/** The window as the gateway records it: one workflow row and one row per call, stage by stage. */
async function seedTraces(pool: string, nowMs: number): Promise<void> {
  const db = tenv.TRACES;
  const statements: D1PreparedStatement[] = [];
  for (const w of buildWorkload(scenario.source, N, scenario.rate, 1)) {
    statements.push(db.prepare("INSERT INTO workflow_traces (workflow_id, tenant, pool, kind, status, arrival_s, slo_s, recorded_at_ms) VALUES (?, 't', ?, 'chess', 'succeeded', ?, ?, ?)").bind(`${pool}-${w.id}`, pool, 1000 + w.arrivalS, sloS, nowMs));
    w.spec.stages.forEach((stage, s) =>
      stage.calls.forEach((c, k) => {
        const callId = `${pool}-${w.id}-s${String(s).padStart(2, "0")}-c${String(k).padStart(2, "0")}`;
        statements.push(
          db
            .prepare("INSERT INTO call_traces (call_id, workflow_id, tenant, pool, stage_index, step, input_tokens, output_tokens, instance_id, released_s, deadline_s, budget_s, recorded_at_ms) VALUES (?, ?, 't', ?, ?, ?, ?, ?, 'a100-0', 0, 0, 0, ?)")
            .bind(callId, `${pool}-${w.id}`, pool, s, c.step, c.inputTokens, c.outputTokens, nowMs),
        );
      }),
    );
  }
  await db.batch(statements);
}

async function registerReferencePool(pool: string): Promise<void> {
  const coordinator = tenv.COORDINATOR.getByName(pool);
  for (const [i, gpu] of REFERENCE_POOL.entries()) {
    const r = await coordinator.register(pool, { id: `${gpu.toLowerCase()}-${i}`, url: "http://127.0.0.1:9", gpu });
    expect(r.ok).toBe(true);
  }
}

const policy = getPolicy("hexgen");
if (policy === undefined) throw new Error("hexgen policy missing");
const direct = tuneAlpha(scenario, policy, { seeds: [1], refineStep: 0 });
const worst = direct.curve.reduce((a, b) => (b.p95 > a.p95 ? b : a));

beforeAll(async () => {
  await applyD1Migrations(tenv.TRACES, MigrationsSchema.parse(Reflect.get(env, "TEST_MIGRATIONS")));
});

describe("the tuner Worker, against the real gateway coordinator", () => {
  it("the cron run installs the α the simulator prefers, and records the decision with its curve", async () => {
    const nowMs = Date.now();
    await seedTraces("default", nowMs);
    await registerReferencePool("default");
    const set = await tenv.COORDINATOR.getByName("default").setPolicy({ alpha: worst.alpha });
    expect(set.ok).toBe(true);
    const before = await tenv.COORDINATOR.getByName("default").tuningContext();

    await worker.scheduled(createScheduledController({ scheduledTime: nowMs, cron: "*/5 * * * *" }), tenv);

    const after = await tenv.COORDINATOR.getByName("default").tuningContext();
    expect(after.alpha).toBe(direct.alpha);
    expect(after.alphaVersion).toBe(before.alphaVersion + 1);
    const [d] = await listDecisions(tenv.TRACES, "default", 10);
    expect(d).toMatchObject({ reason: "cron", workflows: N, currentAlpha: worst.alpha, bestAlpha: direct.alpha, installed: true, alphaVersion: after.alphaVersion, skipped: null, windowStartS: 1000 });
    // Arrivals went through the pool clock (+1000 s) and back: equal up to rounding.
    expect(d?.curve.map((p) => p.alpha)).toEqual(direct.curve.map((p) => p.alpha));
    d?.curve.forEach((p, i) => expect(p.p95S).toBeCloseTo(direct.curve[i]?.p95 ?? Number.NaN, 6));
    expect(d?.gain).toBeGreaterThan(0.05);
    expect(d?.arrivalRate).toBeGreaterThan(0.5);
    expect(d?.cpuMs).toBeGreaterThanOrEqual(0);
  });

  it("the cron run keeps α when the simulated gain is below the threshold (hysteresis), and records why", async () => {
    const nowMs = Date.now();
    await seedTraces("steady", nowMs);
    await registerReferencePool("steady");
    // The grid point closest to the best whose P95 is within the 5% threshold of it: a switch would gain too little.
    const best = direct.curve.find((p) => p.alpha === direct.alpha);
    const near = direct.curve.filter((p) => p.alpha !== direct.alpha && best !== undefined && (p.p95 - best.p95) / p.p95 <= 0.05 && (p.p95 - best.p95) / p.p95 > 0);
    const keep = near.sort((x, y) => Math.abs(x.alpha - direct.alpha) - Math.abs(y.alpha - direct.alpha))[0];
    if (keep === undefined) throw new Error("no α within 5% of the best on this window: the test needs another window");
    await tenv.COORDINATOR.getByName("steady").setPolicy({ alpha: keep.alpha });
    const before = await tenv.COORDINATOR.getByName("steady").tuningContext();

    await worker.scheduled(createScheduledController({ scheduledTime: nowMs, cron: "*/5 * * * *" }), tenv);

    expect(await tenv.COORDINATOR.getByName("steady").tuningContext()).toMatchObject({ alpha: keep.alpha, alphaVersion: before.alphaVersion });
    const [d] = await listDecisions(tenv.TRACES, "steady", 10);
    expect(d).toMatchObject({ reason: "cron", currentAlpha: keep.alpha, bestAlpha: direct.alpha, installed: false, skipped: null });
    expect(d?.gain).toBeGreaterThan(0);
    expect(d?.gain).toBeLessThanOrEqual(0.05);
  });

  it("records, and installs nothing, when α is pinned or the window is too small; POST /tune needs the token", async () => {
    await registerReferencePool("pinned");
    await tenv.COORDINATOR.getByName("pinned").setPolicy({ alpha: 0.3, pinned: true });
    const call = (pool: string, token = TOKEN) => worker.fetch(new Request(`https://tuner/tune?pool=${pool}&reason=manual`, { method: "POST", headers: { authorization: `Bearer ${token}` } }), tenv);
    expect((await call("pinned", "wrong-token-wrong-token-x")).status).toBe(401);
    const pinned = await call("pinned");
    expect(pinned.status).toBe(200);
    expect(await pinned.json()).toMatchObject({ pool: "pinned", reason: "manual", installed: false, skipped: "α is pinned", currentAlpha: 0.3 });
    expect(await tenv.COORDINATOR.getByName("pinned").tuningContext()).toMatchObject({ alpha: 0.3, pinned: true });

    await registerReferencePool("quiet");
    const quiet = await call("quiet");
    expect(await quiet.json()).toMatchObject({ pool: "quiet", installed: false, workflows: 0, skipped: "too few workflows (0 < 50)" });
    expect((await listDecisions(tenv.TRACES, "quiet", 5)).length).toBe(1);
  });

  it("the gateway's POST /admin/pools/:pool/tune runs this tuner through its TUNER binding", async () => {
    await registerReferencePool("viagw");
    const gateway = Reflect.get(env, "TEST_GATEWAY") as Fetcher;
    const res = await gateway.fetch("https://gateway/admin/pools/viagw/tune", { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ pool: "viagw", reason: "manual", installed: false, workflows: 0 });
    const history = await gateway.fetch("https://gateway/admin/pools/viagw/tuning", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(((await history.json()) as { decisions: unknown[] }).decisions).toHaveLength(1);
  });

  it("records the decision even when the coordinator's tuningDone() fails", async () => {
    await registerReferencePool("notify");
    const real = tenv.COORDINATOR.getByName("notify");
    // The real coordinator, but for a tuningDone() that throws (as an unreachable or broken one would).
    const coordinator = { tuningContext: () => real.tuningContext(), installAlpha: (a: number, v: number) => real.installAlpha(a, v), tuningDone: () => Promise.reject(new Error("boom")) };
    const fenv = { ...tenv, COORDINATOR: { getByName: () => coordinator } } as unknown as TunerEnv;
    const config = tuningConfig(tenv);
    if (!config.ok) throw new Error(config.error);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const d = await tunePool(fenv, "notify", "manual", config.value);
      expect(d).toMatchObject({ pool: "notify", installed: false, skipped: "too few workflows (0 < 50)" });
      expect(logged).toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
    expect(await listDecisions(tenv.TRACES, "notify", 5)).toHaveLength(1);
  });

  it("retries a failed D1 statement a few times, then gives up with its error", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      let calls = 0;
      const flaky = () => (++calls < 3 ? Promise.reject(new Error("D1_ERROR: database is locked: SQLITE_BUSY")) : Promise.resolve(calls));
      expect(await retried("a read", flaky)).toBe(3);
      await expect(retried("a read", () => Promise.reject(new Error("still locked")), 2)).rejects.toThrow("still locked");
      expect(warn).toHaveBeenCalledTimes(3);
    } finally {
      warn.mockRestore();
    }
  });

  it("the cron run prunes traces older than the retention", async () => {
    const nowMs = Date.now();
    const old = nowMs - 8 * 24 * 3600 * 1000;
    const db = tenv.TRACES;
    await db.batch([
      db.prepare("INSERT INTO workflow_traces (workflow_id, tenant, pool, kind, status, arrival_s, slo_s, recorded_at_ms) VALUES ('old-wf', 't', 'old', 'replay', 'succeeded', 1, 10, ?)").bind(old),
      db
        .prepare("INSERT INTO call_traces (call_id, workflow_id, tenant, pool, stage_index, step, input_tokens, output_tokens, instance_id, released_s, deadline_s, budget_s, recorded_at_ms) VALUES ('old-wf-s00-c00', 'old-wf', 't', 'old', 0, 'revise', 10, 10, 'a100-0', 0, 0, 0, ?)")
        .bind(old),
    ]);
    await worker.scheduled(createScheduledController({ scheduledTime: nowMs, cron: "*/5 * * * *" }), tenv);
    const left = await db.prepare("SELECT (SELECT count(*) FROM workflow_traces WHERE workflow_id = 'old-wf') AS w, (SELECT count(*) FROM call_traces WHERE workflow_id = 'old-wf') AS c").first();
    expect(left).toEqual({ w: 0, c: 0 });
  });
});
