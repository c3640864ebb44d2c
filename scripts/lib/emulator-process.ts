/**
 * One emulated vLLM server as a process of its own (scripts/emulator.ts), for the local stack: started on a
 * given port (0: a free one) and, after a crash or a kill, started again on the same port, since the
 * coordinator knows the instance by its URL.
 *
 * The process is Node itself with tsx as an import hook (not the tsx CLI, which would run the server in
 * a child of its own): a SIGKILL then reaches the process that holds the listener, as a crash would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { GpuType } from "../../src/core/gpu";

const ROOT = new URL("../..", import.meta.url).pathname;

export interface EmulatorSpec {
  gpu: GpuType;
  timeScale: number;
  seed: number;
  /** 0 picks a free port. */
  port: number;
  /** The emulator's call log (src/emulator/server.ts StartOptions.callLog). */
  callLog?: string;
}

/** Starts one emulator; resolves with its URL and port once it prints "ready". */
export function startEmulatorProcess(spec: EmulatorSpec): Promise<{ url: string; port: number; child: ChildProcess }> {
  const args = ["--import", "tsx", join(ROOT, "scripts/emulator.ts"), "--gpu", spec.gpu, "--port", String(spec.port), "--time-scale", String(spec.timeScale), "--seed", String(spec.seed)];
  if (spec.callLog !== undefined) args.push("--call-log", spec.callLog);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`emulator ${spec.gpu} did not start in 30 s`));
    }, 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`emulator ${spec.gpu} exited with code ${code}`));
    });
    if (child.stdout === null) return reject(new Error("emulator has no stdout"));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^ready (\S+)/.exec(line);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ url: m[1], port: Number(new URL(m[1]).port), child });
    });
  });
}

/** SIGKILL, as a crash: every open connection drops. Resolves once the process is gone. */
export function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
