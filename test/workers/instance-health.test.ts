/**
 * Issue 8, health: the coordinator probes each instance's /health from its alarm and reads the outcomes
 * of its calls; an unhealthy instance gets no dispatch until it recovers through probation; draining
 * hands the queue back for re-dispatch; a restarted coordinator remembers who is down.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { HEALTH_DEFAULTS } from "../../src/core/instance-health";
import { CoordinatorObject } from "../../src/objects/coordinator";
import { admin, api, endedView, hintedCompletion, isProbe, submitReplay, until, poolPerTest, TWO_GPU_POOL, LIGHT_REPLAY } from "./helpers";

const POOL = TWO_GPU_POOL;
const CALLS = LIGHT_REPLAY.slice(0, 3);
type View = { id: string; status: string; stages: { calls: { id: string; instance: string; failures: unknown[] }[] }[] };
type PoolView = { instances: { id: string; queued: number; running: number; health: { status: string; lastError: string | null } }[] };

const submit = (): Promise<string> => submitReplay(CALLS);
const ended = (id: string): Promise<View> => endedView<View>(id);
const pool = async (): Promise<PoolView> => (await (await admin("/pools/default", "GET")).json()) as PoolView;
const statusOf = async (id: string): Promise<string | undefined> => (await pool()).instances.find((i) => i.id === id)?.health.status;
const coordinator = () => env.COORDINATOR.getByName("default");

/** vLLM per port: `health` says what /health answers, `calls` how generation goes ("ok", "refused", or "gate": wait for open()). */
function upstream() {
  const state = { health: { "9001": true, "9002": true } as Record<string, boolean>, calls: { "9001": "ok", "9002": "ok" } as Record<string, "ok" | "refused" | "gate">, open: false };
  const ports: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const port = new URL(String(input)).port;
    if (isProbe(input)) return new Response(null, { status: state.health[port] === false ? 503 : 200 });
    ports.push(port);
    const mode = state.calls[port];
    if (mode === "refused") throw new TypeError("connect ECONNREFUSED");
    while (mode === "gate" && !state.open) await new Promise((r) => setTimeout(r, 5));
    return hintedCompletion(new Headers(init?.headers));
  });
  return { state, ports };
}

poolPerTest(POOL);

describe("instance health", () => {
  it("probes from the alarm: a failing /health takes the instance out of dispatch; it comes back through probation", async () => {
    const up = upstream();
    up.state.health["9001"] = false;
    for (let i = 0; i < HEALTH_DEFAULTS.unhealthyAfter; i++) {
      expect(await statusOf("a100-0")).toBe("healthy");
      expect(await runDurableObjectAlarm(coordinator())).toBe(true);
    }
    expect(await statusOf("a100-0")).toBe("unhealthy");
    expect((await pool()).instances.find((i) => i.id === "a100-0")?.health.lastError).toMatch(/\/health answered 503/);
    // Nothing goes to it now.
    up.ports.length = 0;
    for (const id of [await submit(), await submit()]) expect((await ended(id)).status).toBe("succeeded");
    expect(up.ports.length).toBeGreaterThan(0);
    expect(up.ports.every((p) => p === "9002")).toBe(true);
    // Recovery: the first good probe starts probation, `probationSuccesses` in a row end it.
    up.state.health["9001"] = true;
    await runDurableObjectAlarm(coordinator());
    expect(await statusOf("a100-0")).toBe("probation");
    for (let i = 1; i < HEALTH_DEFAULTS.probationSuccesses; i++) await runDurableObjectAlarm(coordinator());
    expect(await statusOf("a100-0")).toBe("healthy");
  });

  it("with every server down a workflow waits (queued) instead of failing, and runs once one comes back", async () => {
    const up = upstream();
    up.state.health["9001"] = false;
    up.state.health["9002"] = false;
    for (let i = 0; i < HEALTH_DEFAULTS.unhealthyAfter; i++) await runDurableObjectAlarm(coordinator());
    expect((await pool()).instances.map((i) => i.health.status)).toEqual(["unhealthy", "unhealthy"]);
    const id = await submit();
    const stub = env.WORKFLOW.getByName(id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(((await (await api(`/v1/workflows/${id}`)).json()) as View).status).toBe("queued");
    up.state.health["9002"] = true;
    await runDurableObjectAlarm(coordinator());
    expect(await statusOf("l40s-1")).toBe("probation");
    await runDurableObjectAlarm(stub);
    const v = await ended(id);
    expect(v, JSON.stringify(v)).toMatchObject({ status: "succeeded" });
    expect(v.stages.flatMap((s) => s.calls).every((c) => c.instance === "l40s-1")).toBe(true);
  });

  it("counts failed calls: consecutive connection failures make the instance unhealthy, and its calls ran elsewhere", async () => {
    const up = upstream();
    up.state.calls["9001"] = "refused";
    const ids: string[] = [];
    await until(async () => {
      ids.push(await submit());
      await ended(ids.at(-1) ?? "");
      return (await statusOf("a100-0")) === "unhealthy" ? true : undefined;
    }, 20_000);
    expect((await pool()).instances.find((i) => i.id === "a100-0")?.health.lastError).toMatch(/^call: upstream_unreachable/);
    for (const id of ids) expect((await ended(id)).status).toBe("succeeded");
  });

  it("draining finishes the running call and sends the queued ones elsewhere", async () => {
    const up = upstream();
    up.state.calls["9001"] = "gate";
    await admin("/pools/default/instances/a100-0", "PATCH", { maxConcurrency: 1 });
    await admin("/pools/default/instances/l40s-1/drain", "POST");
    const ids = [await submit(), await submit()];
    const a100 = env.GPU_INSTANCE.getByName("default/a100-0");
    await until(async () => ((await a100.stats()).queued >= 1 ? true : undefined));
    await admin("/pools/default/instances/l40s-1/activate", "POST");
    expect((await admin("/pools/default/instances/a100-0/drain", "POST")).status).toBe(200);
    // The queue went back at once; the running call stays.
    expect(await a100.stats()).toMatchObject({ queued: 0, running: 1 });
    up.state.open = true;
    for (const id of ids) {
      const v = await ended(id);
      expect(v.status).toBe("succeeded");
    }
    const placed = (await Promise.all(ids.map(ended))).flatMap((v) => v.stages.flatMap((s) => s.calls));
    expect(placed.filter((c) => c.instance === "a100-0")).toHaveLength(1);
    // Evacuated calls never ran on the drained server: no attempt was spent on them.
    expect(placed.every((c) => c.failures.length === 0)).toBe(true);
  });

  it("a restarted coordinator remembers who is down, and its alarm is armed again", async () => {
    const up = upstream();
    up.state.health["9001"] = false;
    for (let i = 0; i < HEALTH_DEFAULTS.unhealthyAfter; i++) await runDurableObjectAlarm(coordinator());
    const after = await runInDurableObject(coordinator(), async (_obj, state) => {
      await state.storage.deleteAlarm();
      const fresh = new CoordinatorObject(state, env);
      await state.blockConcurrencyWhile(async () => {});
      return { view: fresh.pool(), alarm: await state.storage.getAlarm() };
    });
    expect(after.view.instances.find((i) => i.id === "a100-0")?.health.status).toBe("unhealthy");
    expect(after.alarm).not.toBeNull();
  });
});
