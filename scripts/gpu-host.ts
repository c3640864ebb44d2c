/**
 * `npm run gpu-host -- --gpu A100 --id a100-0 --gateway https://hexflow.example.com --hostname a100-0.gpu.example.com`
 * renders the GPU-host kit for one host into a directory (default deploy/gpu-host/out/<id>): cloudflared config,
 * systemd units, the environment file with the GPU type's vLLM settings, the launch and registration scripts
 * and install.sh. `--host-env host.env` reads the same options as KEY=VALUE lines (GPU=A100, ID=a100-0, ...);
 * flags on the command line win. Not `--env-file`: Node 20 takes that flag for itself, even after the script.
 * Prints one line; a user mistake exits 2.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { runCli, UsageError } from "./lib/cli";
import { HostConfigSchema, KIT_DIR, renderKit, writeKit } from "./gpu-host-render";

const OPTIONS = {
  gpu: { type: "string" },
  id: { type: "string" },
  gateway: { type: "string" },
  pool: { type: "string" },
  hostname: { type: "string" },
  tunnel: { type: "string" },
  "credentials-file": { type: "string" },
  "instance-url": { type: "string" },
  "model-path": { type: "string" },
  model: { type: "string" },
  port: { type: "string" },
  transport: { type: "string" },
  "vpc-binding": { type: "string" },
  "vllm-bin": { type: "string" },
  "cloudflared-bin": { type: "string" },
  "host-env": { type: "string" },
  out: { type: "string" },
} as const;

/** `--credentials-file` → credentialsFile; in an env file, CREDENTIALS_FILE. */
const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
const envKey = (flag: string): string => flag.toUpperCase().replace(/-/g, "_");

function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) throw new UsageError(`env file not found: ${path}`);
  const out: Record<string, string> = {};
  for (const [i, raw] of readFileSync(path, "utf8").split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m?.[1] === undefined || m[2] === undefined) throw new UsageError(`${path}:${i + 1}: expected KEY=VALUE`);
    out[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: OPTIONS, strict: true, allowPositionals: false });
  const fromFile = values["host-env"] === undefined ? {} : readEnvFile(values["host-env"]);
  const flags = Object.keys(OPTIONS).filter((f) => f !== "host-env" && f !== "out");
  const unknown = Object.keys(fromFile).filter((k) => !flags.some((f) => envKey(f) === k) && k !== "OUT");
  if (unknown.length > 0) throw new UsageError(`unknown key in the env file: ${unknown[0] ?? ""}`);
  const input: Record<string, string> = {};
  for (const flag of flags) {
    const value = (values as Record<string, string | undefined>)[flag] ?? fromFile[envKey(flag)];
    if (value !== undefined && value !== "") input[camel(flag)] = value;
  }
  const parsed = HostConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path[0];
    const flag = typeof field === "string" ? `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "options";
    throw new UsageError(`${flag}: ${issue === undefined ? "invalid" : z.prettifyError(new z.ZodError([issue])).replace(/^✖ /, "").split("\n")[0]}`);
  }
  const out = values.out ?? fromFile["OUT"] ?? join(KIT_DIR, "out", parsed.data.id);
  const files = renderKit(parsed.data);
  writeKit(files, out);
  console.log(`gpu-host: wrote ${files.length} files for ${parsed.data.id} (${parsed.data.gpu}, pool ${parsed.data.pool}) to ${out}; on the host run: sudo ./install.sh`);
}

runCli(main);
