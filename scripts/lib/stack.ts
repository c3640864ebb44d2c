/**
 * The local stack: one emulator process per GPU, wrangler's dev server (workerd with local Durable
 * Object storage) and the registration of the fleet. Shared by `npm start` and the end-to-end test.
 *
 * The dev server runs through wrangler's own API (`unstable_startWorker`, what `wrangler dev` runs)
 * with the DevTools inspector off: with it on, wrangler relays every inspector network event to Node
 * over a fresh loopback request, and one streamed 700-token completion opens ~1,800 sockets, enough
 * for a few dozen workflows to exhaust the dev server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { unstable_startWorker } from "wrangler";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { GpuType } from "../../src/core/gpu";
import { adminFetch } from "./admin-client";

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
}

export interface Stack {
  url: string;
  adminToken: string;
  pool: string;
  emulators: { id: string; gpu: GpuType; url: string; child: ChildProcess }[];
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

export async function startStack(o: StackOptions): Promise<Stack> {
  const adminToken = randomBytes(24).toString("hex");
  if (!o.keepState) rmSync(o.stateDir, { recursive: true, force: true });
  const emulators = await Promise.all(
    o.fleet.map(async (gpu, i) => ({ id: `${gpu.toLowerCase()}-${i}`, gpu, ...(await startEmulatorProcess(gpu, o.timeScale, i + 1)) })),
  );
  const port = o.port === 0 ? await freePort() : o.port;
  const stopEmulators = (): void => {
    for (const e of emulators) if (e.child.exitCode === null) e.child.kill("SIGTERM");
  };
  // Whoever ends this process (wrangler installs its own SIGINT handler that exits), the emulators go too.
  process.once("exit", stopEmulators);
  let worker: Awaited<ReturnType<typeof unstable_startWorker>>;
  // Miniflare fetches a real `request.cf` from workers.cloudflare.com; nothing here reads it, and
  // offline the failure prints a stack trace that looks like ours.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  try {
    worker = await unstable_startWorker({
      config: join(ROOT, "wrangler.toml"),
      bindings: { ADMIN_TOKEN: { type: "plain_text", value: adminToken } },
      dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: o.stateDir, logLevel: o.quiet ? "error" : "warn", watch: false },
    });
    await worker.ready;
  } catch (e) {
    stopEmulators();
    throw e;
  }
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    stopEmulators();
    await worker.dispose();
  };
  try {
    const existing = (await (await adminFetch(url, adminToken, `/pools/${o.pool}`)).json()) as { instances?: { id: string }[] };
    for (const old of existing.instances ?? []) await adminFetch(url, adminToken, `/pools/${o.pool}/instances/${old.id}`, { method: "DELETE" });
    for (const e of emulators) {
      const res = await adminFetch(url, adminToken, `/pools/${o.pool}/instances`, { method: "POST", body: JSON.stringify({ id: e.id, url: e.url, gpu: e.gpu, timeScale: o.timeScale }) });
      if (!res.ok) throw new Error(`registering ${e.id} failed: ${res.status} ${await res.text()}`);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, adminToken, pool: o.pool, emulators, stop };
}
