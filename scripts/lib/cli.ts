import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseTrace } from "../../src/sim/trace";
import type { WorkloadSource } from "../../src/sim/workload";

/** A user mistake: one line on stderr, exit code 2, no stack trace. */
export class UsageError extends Error {}

export function runCli(main: () => Promise<void> | void): void {
  Promise.resolve()
    .then(main)
    .catch((e: unknown) => {
      if (e instanceof UsageError || (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS"))) {
        process.stderr.write(`error: ${e.message.split("\n")[0] ?? ""}\n`);
        process.exit(2);
      }
      throw e;
    });
}

export function loadTraceSource(arg: string): WorkloadSource & { label: string } {
  if (arg === "synthetic") return { kind: "synthetic", label: "synthetic" };
  if (!existsSync(arg)) throw new UsageError(`trace file not found: ${arg}`);
  const parsed = parseTrace(readFileSync(arg, "utf8"), arg);
  if (!parsed.ok) throw new UsageError(parsed.error);
  return { kind: "trace", entries: parsed.value, label: arg.split("/").at(-1) ?? arg };
}

/** A comma-separated option's values, trimmed; an empty list is a usage error. */
export function listArg(name: string, raw: string): string[] {
  const xs = raw.split(",").map((x) => x.trim()).filter((x) => x !== "");
  if (xs.length === 0) throw new UsageError(`--${name} is empty`);
  return xs;
}

export function numberArg(name: string, raw: string | undefined, fallback: number, check: (n: number) => boolean = (n) => n > 0): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`--${name} must be a valid number (got "${raw}")`);
  return n;
}

/** ../shared/data next to the checkout, if this machine has it. */
export function sharedDataDir(): string | undefined {
  const candidates = [process.env.HEXFLOW_SHARED_DATA, fileURLToPath(new URL("../../../shared/data", import.meta.url))];
  return candidates.find((d): d is string => d !== undefined && d !== "" && existsSync(d));
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The origin of a URL on this machine; benchmarks send load nowhere else. */
export function localOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url is not a URL: ${raw}`);
  }
  if (!LOOPBACK.has(url.hostname)) throw new UsageError(`--url must be on this machine (127.0.0.1 or localhost), got ${url.hostname}`);
  return url.origin;
}
