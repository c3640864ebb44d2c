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
import type { ChildProcess } from "node:child_process";
import { unstable_startWorker } from "wrangler";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GpuType } from "../../src/core/gpu";
import type { InstanceRegistration } from "../../src/core/pool";
import { adminFetch } from "./admin-client";
import { ensureTenant, saveCredentials } from "./credentials";
import { killProcess, startEmulatorProcess } from "./emulator-process";
import { tenantHeaders, type Gateway } from "./replay";
import { applyTraceMigrations, isSqliteBusy, loadDemoDatabase } from "./stack-d1";
import { buildDashboard } from "../build-dashboard";

const ROOT = new URL("../..", import.meta.url).pathname;

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
  /** Every emulator appends its call log (`--call-log`) to `<callLogDir>/<instance id>.jsonl`. */
  callLogDir?: string;
  /** Fields added to every instance's registration (e.g. a short `requestTimeoutMs` for the chaos harness). */
  registration?: Partial<Pick<InstanceRegistration, "requestTimeoutMs" | "maxConcurrency" | "capacityFactor">>;
}

export interface StackEmulator {
  id: string;
  gpu: GpuType;
  url: string;
  port: number;
  /** The current process: replaced by `startEmulator(id)`. */
  child: ChildProcess;
  seed: number;
  callLog?: string;
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
  emulators: StackEmulator[];
  /** The tuner Worker's own dev server (its `POST /tune`; the gateway reaches it as TUNER). */
  tunerUrl: string;
  /** Runs the tuner's cron once, now (what `tuneEveryS` does on a timer); rejects when the run failed. */
  runTunerCron(): Promise<void>;
  /** SIGKILLs one emulator, as a crash: its connections drop. Resolves once the process is gone. */
  killEmulator(id: string): Promise<void>;
  /** Starts a killed (or crashed) emulator again on the same port, GPU, clock, seed and call log; resolves once ready. */
  startEmulator(id: string): Promise<void>;
  /**
   * Disposes the gateway's dev session and starts it again with the same config, state directory, registry
   * and port (Durable Object state and D1 persist there); resolves once it is ready. The tuner keeps running.
   */
  restartWorker(): Promise<void>;
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

const TUNER_CONFIG = join(ROOT, "workers/tuner/wrangler.toml");

/** Triggers the tuner's scheduled handler through Miniflare's trigger route (wrangler dev's `/cdn-cgi/handler/scheduled`). */
async function runCron(tunerUrl: string): Promise<void> {
  const res = await fetch(`${tunerUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}&time=${Date.now()}`);
  const body = await res.text();
  if (!res.ok) throw new Error(`the tuner's cron run failed: HTTP ${res.status} ${body.slice(0, 500)}`);
}

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
  if (o.callLogDir !== undefined) mkdirSync(o.callLogDir, { recursive: true });
  // The dashboard's script is built, not committed (public/assets/ is ignored): every stack serves a fresh one.
  await buildDashboard();
  const emulators: StackEmulator[] = await Promise.all(
    o.fleet.map(async (gpu, i) => {
      const id = `${gpu.toLowerCase()}-${i}`;
      const callLog = o.callLogDir === undefined ? undefined : join(o.callLogDir, `${id}.jsonl`);
      const started = await startEmulatorProcess({ gpu, timeScale: o.timeScale, seed: i + 1, port: 0, ...(callLog === undefined ? {} : { callLog }) });
      return { id, gpu, seed: i + 1, ...started, ...(callLog === undefined ? {} : { callLog }) };
    }),
  );
  const port = o.port === 0 ? await freePort() : o.port;
  const stopEmulators = (): void => {
    for (const e of emulators) if (e.child.exitCode === null) e.child.kill("SIGTERM");
  };
  // Whoever ends this process (wrangler installs its own SIGINT handler that exits), the emulators go too.
  process.once("exit", stopEmulators);
  let worker: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
  let tuner: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
  let startGateway: (() => ReturnType<typeof unstable_startWorker>) | undefined;
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
    startGateway = () => unstable_startWorker({ config: join(ROOT, "wrangler.toml"), bindings: { ADMIN_TOKEN: { type: "plain_text", value: adminToken } }, dev: { ...dev, server: { hostname: "127.0.0.1", port } } });
    // Both sessions start together: the tuner adds about a second to the start-up, not its own seven.
    [worker, tuner] = await Promise.all([
      startGateway(),
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
      const res = await adminFetch(url, adminToken, `/pools/${o.pool}/instances`, { method: "POST", body: JSON.stringify({ ...o.registration, id: e.id, url: e.url, gpu: e.gpu, timeScale: o.timeScale }) });
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
  const emulator = (id: string): StackEmulator => {
    const e = emulators.find((x) => x.id === id);
    if (e === undefined) throw new Error(`no emulator "${id}" in the stack (${emulators.map((x) => x.id).join(", ")})`);
    return e;
  };
  const killEmulator = (id: string): Promise<void> => killProcess(emulator(id).child);
  const startEmulator = async (id: string): Promise<void> => {
    const e = emulator(id);
    if (e.child.exitCode === null && e.child.signalCode === null) throw new Error(`emulator ${id} is still running`);
    const started = await startEmulatorProcess({ gpu: e.gpu, timeScale: o.timeScale, seed: e.seed, port: e.port, ...(e.callLog === undefined ? {} : { callLog: e.callLog }) });
    e.child = started.child;
  };
  const restartWorker = async (): Promise<void> => {
    if (startGateway === undefined || worker === undefined) throw new Error("the gateway has not started");
    await worker.dispose();
    worker = await startGateway();
    await worker.ready;
  };
  return { url, adminToken, apiKey, pool: o.pool, emulators, tunerUrl, runTunerCron, killEmulator, startEmulator, restartWorker, stop };
}
