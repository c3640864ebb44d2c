import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { LoadgenEventSchema, type LoadgenEvent, type LoadgenWorkflow } from "./loadgen-events";

const ROOT = new URL("../..", import.meta.url).pathname;

export interface LoadgenArgs {
  url: string;
  /** The tenant key, passed in the child's environment (HEXFLOW_API_KEY) rather than on its command line. */
  apiKey: string;
  trace: string;
  rate: number;
  workflows: number;
  seed: number;
  timeScale: number;
  sloMs: number;
  timeoutS: number;
  pollMs: number;
  /** The rate is multiplied by `factor` from workflow `atIndex` on. */
  rateChange?: { atIndex: number; factor: number };
}

/** Runs scripts/loadgen.ts as its own process; `onEvent` hears each line as it comes. */
export function runLoadgen(a: LoadgenArgs, onEvent: (e: LoadgenEvent) => void): Promise<{ wallMs: number; workflows: LoadgenWorkflow[] }> {
  const args = [
    join(ROOT, "scripts/loadgen.ts"),
    ...["--url", a.url, "--trace", a.trace, "--rate", String(a.rate), "--workflows", String(a.workflows), "--seed", String(a.seed)],
    ...["--time-scale", String(a.timeScale), "--slo-ms", String(a.sloMs), "--timeout-s", String(a.timeoutS), "--poll-ms", String(a.pollMs)],
    ...(a.rateChange === undefined ? [] : ["--change-at", String(a.rateChange.atIndex), "--rate-factor", String(a.rateChange.factor)]),
  ];
  const child = spawn(join(ROOT, "node_modules/.bin/tsx"), args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HEXFLOW_API_KEY: a.apiKey } });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    let result: { wallMs: number; workflows: LoadgenWorkflow[] } | undefined;
    if (child.stdout === null) return reject(new Error("load generator has no stdout"));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const parsed = LoadgenEventSchema.safeParse(JSON.parse(line));
      if (!parsed.success) return;
      onEvent(parsed.data);
      if (parsed.data.type === "result") result = { wallMs: parsed.data.wallMs, workflows: parsed.data.workflows };
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (result !== undefined) resolve(result);
      else reject(new Error(`load generator exited with code ${code}: ${stderr.trim().split("\n").at(-1) ?? ""}`));
    });
  });
}
