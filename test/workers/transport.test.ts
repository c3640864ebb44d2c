/**
 * Issue 10, the upstream transport: how the gateway reaches each vLLM server. "vpc" sends calls and health
 * probes through a Workers VPC service binding (here the fake GPU_VPC of vitest.config.ts, which records what
 * reaches it), "access" adds the Access service token's headers and never lets them out, "direct" is the
 * global fetch as before, and a registration whose transport this Worker cannot serve is refused unchanged.
 */
import { env } from "cloudflare:workers";
import { reset, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { STEP } from "../../src/core/chess";
import { resolveTransport, upstreamFetcher } from "../../src/upstream/transport";
import { admin, endedView, hintedCompletion, isProbe, submitReplay } from "./helpers";

type Recorded = { method: string; url: string; headers: Record<string, string> };
type PoolView = { instances: { id: string; transport: string; vpcBinding?: string; health: { status: string; lastError: string | null } }[] };

const CALLS = [
  { step: STEP.retriever, inputTokens: 301, outputTokens: 5 },
  { step: STEP.candidate, inputTokens: 2000, outputTokens: 60 },
];
const ACCESS_ID = "test-access-id.access";
const ACCESS_SECRET = "test-access-secret-0123456789abcdef";

/** The fake VPC binding as the test sees it; absent would mean vitest.config.ts lost it. */
function vpc(): Fetcher {
  const b = env.GPU_VPC;
  if (b === undefined) throw new Error("the workers test project binds no GPU_VPC (vitest.config.ts)");
  return b;
}
const vpcRequests = async (): Promise<Recorded[]> => (await (await vpc().fetch("http://fake.test/__fake/requests")).json()) as Recorded[];
const clearVpcRequests = async (): Promise<void> => void (await (await vpc().fetch("http://fake.test/__fake/requests", { method: "DELETE" })).body?.cancel());
const pool = async (): Promise<PoolView> => (await (await admin("/pools/default", "GET")).json()) as PoolView;

/** The global fetch, answering like vLLM and recording each request's url and headers. */
function globalVllm(): { url: string; headers: Headers }[] {
  const seen: { url: string; headers: Headers }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const headers = new Headers(init?.headers);
    seen.push({ url: String(input), headers });
    if (isProbe(input)) return new Response(null, { status: 200 });
    return hintedCompletion(headers);
  });
  return seen;
}

async function runWorkflow(): Promise<void> {
  const id = await submitReplay(CALLS);
  expect((await endedView<{ status: string }>(id)).status).toBe("succeeded");
}

afterEach(async () => {
  vi.restoreAllMocks();
  await clearVpcRequests();
  await reset();
});

describe("upstream transport", () => {
  it('"vpc": calls and health probes go through the VPC binding, none through the global fetch', async () => {
    const global = globalVllm();
    const res = await admin("/pools/default/instances", "POST", { id: "vpc-0", url: "http://10.0.0.5:8000", gpu: "A100", timeScale: 20, transport: "vpc" });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ id: "vpc-0", transport: "vpc" });
    await runWorkflow();
    expect(await runDurableObjectAlarm(env.COORDINATOR.getByName("default"))).toBe(true);
    const reached = await vpcRequests();
    const completions = reached.filter((r) => r.method === "POST" && r.url === "http://10.0.0.5:8000/v1/completions");
    expect(completions).toHaveLength(CALLS.length);
    expect(reached.some((r) => r.method === "GET" && r.url === "http://10.0.0.5:8000/health")).toBe(true);
    expect(global.filter((g) => g.url.includes("10.0.0.5"))).toEqual([]);
    // No Access headers on this path: the tunnel is the protection.
    expect(completions.every((r) => r.headers["cf-access-client-secret"] === undefined)).toBe(true);
    expect((await pool()).instances.find((i) => i.id === "vpc-0")?.health.status).toBe("healthy");
  });

  it('"access": every call and probe carries the service token, which appears in no response and no log line', async () => {
    const global = globalVllm();
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack ?? ""}` : typeof a === "string" ? a : JSON.stringify(a))).join(" ")));
    }
    const registered = await admin("/pools/default/instances", "POST", { id: "acc-0", url: "https://gpu0.example.test", gpu: "A100", timeScale: 20, transport: "access" });
    expect(registered.status).toBe(201);
    const bodies = [await registered.text()];
    await runWorkflow();
    await runDurableObjectAlarm(env.COORDINATOR.getByName("default"));
    const toGpu = global.filter((g) => g.url.startsWith("https://gpu0.example.test/"));
    expect(toGpu.filter((g) => g.url.endsWith("/v1/completions"))).toHaveLength(CALLS.length);
    expect(toGpu.some((g) => g.url.endsWith("/health"))).toBe(true);
    for (const g of toGpu) {
      expect(g.headers.get("cf-access-client-id")).toBe(ACCESS_ID);
      expect(g.headers.get("cf-access-client-secret")).toBe(ACCESS_SECRET);
    }
    expect(await vpcRequests()).toEqual([]);
    bodies.push(await (await admin("/pools/default", "GET")).text(), await (await admin("/pools/default/instances/acc-0", "PATCH", { maxConcurrency: 4 })).text());
    for (const text of [...bodies, ...logged]) {
      expect(text).not.toContain(ACCESS_SECRET);
      expect(text).not.toContain(ACCESS_ID);
    }
  });

  it('"direct" (the default): the global fetch to the url, with no Access or Authorization header', async () => {
    const global = globalVllm();
    const res = await admin("/pools/default/instances", "POST", { id: "dir-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 });
    expect(await res.json()).toMatchObject({ id: "dir-0", transport: "direct" });
    await runWorkflow();
    await runDurableObjectAlarm(env.COORDINATOR.getByName("default"));
    const toGpu = global.filter((g) => g.url.startsWith("http://127.0.0.1:9001/"));
    expect(toGpu.filter((g) => g.url.endsWith("/v1/completions"))).toHaveLength(CALLS.length);
    expect(toGpu.some((g) => g.url.endsWith("/health"))).toBe(true);
    for (const g of toGpu) for (const h of ["cf-access-client-id", "cf-access-client-secret", "authorization"]) expect(g.headers.get(h)).toBeNull();
    expect(await vpcRequests()).toEqual([]);
  });

  it("refuses, with a 400 that says why and no change, a transport this Worker cannot serve", async () => {
    globalVllm();
    const base = { id: "gpu-0", url: "http://10.0.0.5:8000", gpu: "A100", timeScale: 20 };
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ transport: "vpc", vpcBinding: "GPU_VPC_MISSING" }, /GPU_VPC_MISSING/],
      [{ transport: "vpc", vpcBinding: "TRACES" }, /GPU_VPC/],
      [{ transport: "direct", vpcBinding: "GPU_VPC" }, /only used with transport "vpc"/],
      [{ transport: "access" }, /must be https/],
      [{ transport: "pigeon" }, /transport/],
    ];
    for (const [extra, message] of refused) {
      const res = await admin("/pools/default/instances", "POST", { ...base, ...extra });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.message).toMatch(message);
    }
    expect((await pool()).instances).toEqual([]);
    // An update is checked the same way; a PATCH of another field keeps the transport.
    expect((await admin("/pools/default/instances", "POST", { ...base, transport: "vpc" })).status).toBe(201);
    const patched = await admin("/pools/default/instances/gpu-0", "PATCH", { transport: "vpc", vpcBinding: "GPU_VPC_MISSING" });
    expect(patched.status).toBe(400);
    expect(((await patched.json()) as { error: { message: string } }).error.message).toMatch(/GPU_VPC_MISSING/);
    expect((await admin("/pools/default/instances/gpu-0", "PATCH", { maxConcurrency: 4 })).status).toBe(200);
    expect((await pool()).instances.find((i) => i.id === "gpu-0")).toMatchObject({ transport: "vpc" });
    const direct = await admin("/pools/default/instances/gpu-0", "PATCH", { transport: "direct" });
    expect(await direct.json()).not.toHaveProperty("vpcBinding");
  });

  it('refuses "access" without both secrets, and sends VLLM_API_KEY as a Bearer token when it is set', async () => {
    const choice = { transport: "access" as const, url: "https://gpu0.example.test" };
    for (const missing of [{ ACCESS_CLIENT_ID: "" }, { ACCESS_CLIENT_SECRET: undefined }]) {
      const r = resolveTransport({ ...env, ...missing }, choice);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.message).toMatch(/ACCESS_CLIENT_ID and ACCESS_CLIENT_SECRET/);
        expect(r.message).not.toContain(ACCESS_SECRET);
      }
    }
    // A transport that stops working after registration fails like an unreachable server, naming the cause.
    await expect(upstreamFetcher({ ...env, ACCESS_CLIENT_SECRET: "" }, choice)("https://gpu0.example.test/health", { method: "GET" })).rejects.toThrow(/ACCESS_CLIENT_SECRET/);
    const global = globalVllm();
    await upstreamFetcher({ ...env, VLLM_API_KEY: "vllm-key-123" }, { transport: "direct", url: "http://127.0.0.1:9001" })("http://127.0.0.1:9001/health", { method: "GET" });
    expect(global[0]?.headers.get("authorization")).toBe("Bearer vllm-key-123");
  });
});
