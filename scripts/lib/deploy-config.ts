/**
 * Reads a wrangler config as wrangler resolves it for one environment (its own normaliser, so inheritance
 * is wrangler's, not a guess), and names the bindings it declares. test/tooling/deploy-config.test.ts uses
 * it to check that `[env.production]` repeats every binding of the default environment, since wrangler does
 * not inherit bindings and a forgotten one only shows up as a runtime error after a deploy.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_readConfig, type Unstable_Config } from "wrangler";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const GATEWAY_CONFIG = path.join(ROOT, "wrangler.toml");
export const TUNER_CONFIG = path.join(ROOT, "workers", "tuner", "wrangler.toml");

export function readWranglerConfig(configPath: string, env?: string): Unstable_Config {
  return unstable_readConfig({ config: configPath, ...(env === undefined ? {} : { env }) }, { hideWarnings: true });
}

function hasStringField(v: unknown, field: string): v is Record<string, string> {
  return typeof v === "object" && v !== null && typeof (v as Record<string, unknown>)[field] === "string";
}

/**
 * Every binding name a resolved config declares, as "kind:NAME": each list of `{ binding }` entries (D1, services,
 * VPC services, KV, R2, ... whichever wrangler adds), Durable Objects, queue producers, assets and vars.
 */
export function bindingNames(config: object): Set<string> {
  const names = new Set<string>();
  for (const [kind, value] of Object.entries(config)) {
    if (Array.isArray(value)) for (const item of value) if (hasStringField(item, "binding")) names.add(`${kind}:${item.binding}`);
  }
  const c = config as Partial<Pick<Unstable_Config, "durable_objects" | "queues" | "assets" | "vars">>;
  for (const b of c.durable_objects?.bindings ?? []) names.add(`durable_objects:${b.name}`);
  for (const p of c.queues?.producers ?? []) names.add(`queues:${p.binding}`);
  if (c.assets?.binding !== undefined) names.add(`assets:${c.assets.binding}`);
  for (const name of Object.keys(c.vars ?? {})) names.add(`vars:${name}`);
  return names;
}

/** Bindings of the default environment that `env` lacks (sorted), e.g. ["d1_databases:TRACES"]. */
export function missingBindings(defaults: object, env: object): string[] {
  const have = bindingNames(env);
  return [...bindingNames(defaults)].filter((n) => !have.has(n)).sort();
}

/** `wrangler deploy --dry-run` of one config and environment: bundles and validates, uploads nothing, needs no account. */
export function dryRunDeploy(configPath: string, env: string, outdir: string): Promise<{ code: number; output: string }> {
  const wrangler = path.join(ROOT, "node_modules", ".bin", "wrangler");
  const args = ["deploy", "--dry-run", "--env", env, "--outdir", outdir, "-c", configPath];
  return new Promise((resolve) => {
    execFile(wrangler, args, { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" }, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}
