/**
 * The local D1 databases the stack prepares before its dev server opens them: the TRACES migrations and,
 * when asked, the demo database. Both run wrangler's CLI against the stack's state directory.
 */
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = (name: string) => join(ROOT, "node_modules/.bin", name);

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
export async function loadDemoDatabase(stateDir: string, keepState: boolean): Promise<{ loaded: boolean; ms: number }> {
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
export async function applyTraceMigrations(stateDir: string): Promise<number> {
  const started = performance.now();
  const r = await runWrangler(["d1", "migrations", "apply", "TRACES", "--local", "--persist-to", resolve(stateDir)]);
  if (r.code !== 0) throw new Error(`applying the TRACES migrations to the local D1 failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return performance.now() - started;
}

export const isSqliteBusy = (e: unknown): boolean => e instanceof Error && /SQLITE_BUSY|database is locked/.test(e.message);
