/**
 * The local stack: one emulator process per GPU, wrangler's dev server (workerd with local Durable
 * Object storage) and the registration of the fleet. Shared by `npm start` and the end-to-end test.
 *
 * The tuner Worker (workers/tuner) runs beside the gateway in a second dev session: the two share the
 * state directory (so the tuner's TRACES is the gateway's local D1) and a dev registry of their own (so
 * the tuner's COORDINATOR binding, script_name "hexflow-gateway", reaches the gateway's Durable Objects
 * over RPC, and the gateway's TUNER service binding reaches the tuner). The registry is private to the
 * stack, so stacks running side by side (tests, benchmarks, another `npm start`) never reach each other.
 * Local cron never fires: `tuneEveryS` runs the tuner's scheduled handler on a timer, `runTunerCron()` once.
 *
 * The dev server runs through wrangler's own API (`unstable_startWorker`, what `wrangler dev` runs)
 * with the DevTools inspector off: with it on, wrangler relays every inspector network event to Node
 * over a fresh loopback request, and one streamed 700-token completion opens ~1,800 sockets, enough
 * for a few dozen workflows to exhaust the dev server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { unstable_startWorker } from "wrangler";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { GpuType } from "../../src/core/gpu";
import { adminFetch } from "./admin-client";
import { ensureTenant, saveCredentials } from "./credentials";
import { tenantHeaders, type Gateway } from "./replay";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = (name: string) => join(ROOT, "node_modules/.bin", name);

export interface StackOptions {
  fleet: readonly GpuType[];
  timeScale: number;
  port: number;
  pool: string;
  /** Keep the Durable Object state of the previous run (default: start clean). */
  keepState: boolean;
  stateDir: string;
  quiet: boolean;
  /**
   * Load data/demo/demo.sql into the local D1 bound as DEMO_DB (once per state directory) and register
   * it as the database "demo". Off unless asked for (`npm start` asks), so benchmarks do not pay for it.
   */
  demoDatabase?: boolean;
  /**
   * Run the tuner's cron (its scheduled handler: every pool with recent traces, then trace pruning) every
   * this many seconds of real time, as the deployed cron does every 300 s. Off when absent or 0, so
   * benchmarks tune only when they ask (`runTunerCron()`, or `POST /admin/pools/:pool/tune`).
   */
  tuneEveryS?: number;
  /** The tuner's TUNING_CONFIG: JSON overrides of the tuning defaults (src/sim/tuning-decision.ts). */
  tuningConfig?: string;
  /** The local tenant's terms (src/core/tenant.ts TenantConfigSchema); default LOCAL_TENANT_CONFIG. */
  tenantConfig?: unknown;
  /** The pool's admission control (default "enforce"); benchmarks of a scheduler alone turn it off. */
  admission?: "enforce" | "off";
}

/**
 * The local tenant: quotas far above what one machine can serve, so they never decide a local run, and the
 * widest SLO class, so any benchmark's SLO is accepted.
 */
export const LOCAL_TENANT_CONFIG = {
  slo: { defaultScale: 5, minScale: 0.5, maxScale: 100_000 },
  quota: { workflowsPerS: 10_000, burst: 100_000, maxConcurrent: 100_000 },
  overload: "reject",
} as const;

export interface Stack {
  url: string;
  adminToken: string;
  /** The key of the local tenant ("local"), also saved in the state directory's credentials.json. */
  apiKey: string;
  pool: string;
  emulators: { id: string; gpu: GpuType; url: string; child: ChildProcess }[];
  /** The tuner Worker's own dev server (its `POST /tune`; the gateway reaches it as TUNER). */
  tunerUrl: string;
  /** Runs the tuner's cron once, now (what `tuneEveryS` does on a timer); rejects when the run failed. */
  runTunerCron(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function startEmulatorProcess(gpu: GpuType, timeScale: number, seed: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(BIN("tsx"), [join(ROOT, "scripts/emulator.ts"), "--gpu", gpu, "--port", "0", "--time-scale", String(timeScale), "--seed", String(seed)], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`emulator ${gpu} did not start in 30 s`)), 30_000);
    child.once("exit", (code) => reject(new Error(`emulator ${gpu} exited with code ${code}`)));
    if (child.stdout === null) return reject(new Error("emulator has no stdout"));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^ready (\S+)/.exec(line);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ url: m[1], child });
    });
  });
}

function runWrangler(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(BIN("wrangler"), [...args, "--config", join(ROOT, "wrangler.toml")], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  // Loading the demo takes seconds; a wrangler that hangs (no network, a lock) must not hang `npm start`.
  const timer = setTimeout(() => child.kill("SIGTERM"), 120_000);
  return new Promise((resolvePromise, reject) => {
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

const DEMO_SQL = join(ROOT, "data/demo/demo.sql");

/**
 * Loads the demo database into the local D1 that wrangler dev will use: the same `<persist>/v3/d1`
 * directory, written before the dev server opens it so two processes never share the SQLite file.
 * A kept state that already has the tables is left alone. Returns how long it took, in ms.
 */
async function loadDemoDatabase(stateDir: string, keepState: boolean): Promise<{ loaded: boolean; ms: number }> {
  const started = performance.now();
  const local = ["d1", "execute", "DEMO_DB", "--local", "--persist-to", resolve(stateDir)];
  if (keepState) {
    const probe = await runWrangler([...local, "--json", "--command", "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'stores'"]);
    if (probe.code === 0 && /"n":\s*1\b/.test(probe.stdout)) return { loaded: false, ms: performance.now() - started };
  }
  const load = await runWrangler([...local, "--file", DEMO_SQL]);
  if (load.code !== 0) throw new Error(`loading ${DEMO_SQL} into the local D1 failed (exit ${load.code}): ${load.stderr.trim() || load.stdout.trim()}`);
  return { loaded: true, ms: performance.now() - started };
}

/**
 * Applies migrations/ to the local TRACES D1 of the state directory, before the dev server opens it
 * (like the demo load, and in parallel with it: each database is its own SQLite file). Wrangler skips
 * the migrations a kept state already has. Returns how long it took, in ms.
 */
async function applyTraceMigrations(stateDir: string): Promise<number> {
  const started = performance.now();
  const r = await runWrangler(["d1", "migrations", "apply", "TRACES", "--local", "--persist-to", resolve(stateDir)]);
  if (r.code !== 0) throw new Error(`applying the TRACES migrations to the local D1 failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return performance.now() - started;
}

const TUNER_CONFIG = join(ROOT, "workers/tuner/wrangler.toml");

/** Triggers the tuner's scheduled handler through Miniflare's trigger route (wrangler dev's `/cdn-cgi/handler/scheduled`). */
async function runCron(tunerUrl: string): Promise<void> {
  const res = await fetch(`${tunerUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}&time=${Date.now()}`);
  const body = await res.text();
  if (!res.ok) throw new Error(`the tuner's cron run failed: HTTP ${res.status} ${body.slice(0, 500)}`);
}

const isSqliteBusy = (e: unknown): boolean => e instanceof Error && /SQLITE_BUSY|database is locked/.test(e.message);

async function registerDemoDatabase(gw: Gateway): Promise<void> {
  const res = await fetch(`${gw.url}/v1/databases`, {
    method: "POST",
    headers: tenantHeaders(gw),
    body: JSON.stringify({ name: "demo", target: { kind: "d1", binding: "DEMO_DB" } }),
  });
  // 409: a kept state registered it on an earlier run.
  if (res.status !== 201 && res.status !== 409) throw new Error(`registering the demo database failed: ${res.status} ${await res.text()}`);
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const adminToken = randomBytes(24).toString("hex");
  if (!o.keepState) rmSync(o.stateDir, { recursive: true, force: true });
  const firstDemo = o.demoDatabase === true ? loadDemoDatabase(o.stateDir, o.keepState) : Promise.resolve(undefined);
  const firstTraces = applyTraceMigrations(o.stateDir);
  // The two wrangler processes share the D1 namespace's metadata.sqlite, and now and then one opens it while
  // the other holds the lock (workerd: "database is locked: SQLITE_BUSY", fatal at its start, so nothing was
  // written): then the loser runs again, alone, once the first attempts are over.
  const firstOver = Promise.allSettled([firstDemo, firstTraces]);
  const traces = firstTraces.catch(async (e: unknown) => {
    if (!isSqliteBusy(e)) throw e;
    await firstOver;
    return applyTraceMigrations(o.stateDir);
  });
  const demo = firstDemo.catch(async (e: unknown) => {
    if (!isSqliteBusy(e)) throw e;
    await Promise.allSettled([firstOver, traces]);
    return loadDemoDatabase(o.stateDir, o.keepState);
  });
  // Awaited before the dev server starts; this keeps a failure from being unhandled meanwhile.
  demo.catch(() => undefined);
  traces.catch(() => undefined);
  const emulators = await Promise.all(
    o.fleet.map(async (gpu, i) => ({ id: `${gpu.toLowerCase()}-${i}`, gpu, ...(await startEmulatorProcess(gpu, o.timeScale, i + 1)) })),
  );
  const port = o.port === 0 ? await freePort() : o.port;
  const stopEmulators = (): void => {
    for (const e of emulators) if (e.child.exitCode === null) e.child.kill("SIGTERM");
  };
  // Whoever ends this process (wrangler installs its own SIGINT handler that exits), the emulators go too.
  process.once("exit", stopEmulators);
  let worker: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
  let tuner: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
  // The two dev sessions' own registry (see the top of this file); removed by stop().
  const registry = mkdtempSync(join(tmpdir(), "hexflow-dev-registry-"));
  process.once("exit", () => rmSync(registry, { recursive: true, force: true }));
  const dispose = async (): Promise<void> => {
    await Promise.allSettled([worker?.dispose(), tuner?.dispose()]);
    rmSync(registry, { recursive: true, force: true });
  };
  // Miniflare fetches a real `request.cf` from workers.cloudflare.com; nothing here reads it, and
  // offline the failure prints a stack trace that looks like ours.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  try {
    const loaded = await demo;
    const migratedMs = await traces;
    if (!o.quiet) process.stdout.write(`applied the TRACES migrations to local D1 in ${(migratedMs / 1000).toFixed(1)} s\n`);
    if (loaded !== undefined && !o.quiet) process.stdout.write(loaded.loaded ? `loaded the demo database into local D1 in ${(loaded.ms / 1000).toFixed(1)} s\n` : "the demo database is already in local D1 (kept state)\n");
    const dev = { inspector: false, persist: o.stateDir, registry, logLevel: o.quiet ? "error" : "warn", watch: false } as const;
    const tunerBindings = {
      ADMIN_TOKEN: { type: "plain_text", value: adminToken },
      ...(o.tuningConfig === undefined ? {} : { TUNING_CONFIG: { type: "plain_text", value: o.tuningConfig } }),
    } as const;
    // Both sessions start together: the tuner adds about a second to the start-up, not its own seven.
    [worker, tuner] = await Promise.all([
      unstable_startWorker({ config: join(ROOT, "wrangler.toml"), bindings: { ADMIN_TOKEN: { type: "plain_text", value: adminToken } }, dev: { ...dev, server: { hostname: "127.0.0.1", port } } }),
      unstable_startWorker({ config: TUNER_CONFIG, bindings: tunerBindings, dev: { ...dev, server: { hostname: "127.0.0.1", port: 0 } } }),
    ]);
    await Promise.all([worker.ready, tuner.ready]);
  } catch (e) {
    stopEmulators();
    await dispose();
    throw e;
  }
  const url = `http://127.0.0.1:${port}`;
  const tunerUrl = (await tuner.url).origin;
  let cronTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = async (): Promise<void> => {
    stopped = true;
    clearTimeout(cronTimer);
    stopEmulators();
    await dispose();
  };
  const runTunerCron = (): Promise<void> => runCron(tunerUrl);
  // One run at a time: the next is scheduled when the previous one has ended.
  const scheduleCron = (everyS: number): void => {
    cronTimer = setTimeout(() => {
      void runTunerCron()
        .catch((e: unknown) => process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`))
        .finally(() => {
          if (!stopped) scheduleCron(everyS);
        });
    }, everyS * 1000);
    cronTimer.unref();
  };
  let apiKey = "";
  try {
    const existing = (await (await adminFetch(url, adminToken, `/pools/${o.pool}`)).json()) as { instances?: { id: string }[] };
    for (const old of existing.instances ?? []) await adminFetch(url, adminToken, `/pools/${o.pool}/instances/${old.id}`, { method: "DELETE" });
    for (const e of emulators) {
      const res = await adminFetch(url, adminToken, `/pools/${o.pool}/instances`, { method: "POST", body: JSON.stringify({ id: e.id, url: e.url, gpu: e.gpu, timeScale: o.timeScale }) });
      if (!res.ok) throw new Error(`registering ${e.id} failed: ${res.status} ${await res.text()}`);
    }
    if (o.admission !== undefined) {
      const res = await adminFetch(url, adminToken, `/pools/${o.pool}/policy`, { method: "PUT", body: JSON.stringify({ admission: o.admission }) });
      if (!res.ok) throw new Error(`setting admission ${o.admission} failed: ${res.status} ${await res.text()}`);
    }
    apiKey = await ensureTenant(url, adminToken, "local", o.tenantConfig ?? LOCAL_TENANT_CONFIG);
    saveCredentials(o.stateDir, { url, apiKey, adminToken });
    if (o.demoDatabase === true) await registerDemoDatabase({ url, apiKey });
  } catch (e) {
    await stop();
    throw e;
  }
  if (o.tuneEveryS !== undefined && o.tuneEveryS > 0) scheduleCron(o.tuneEveryS);
  return { url, adminToken, apiKey, pool: o.pool, emulators, tunerUrl, runTunerCron, stop };
}
