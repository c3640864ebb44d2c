/**
 * Renders the GPU-host kit (deploy/gpu-host) for one host: the templates with `{{NAME}}` filled in, and the
 * scripts copied, laid out as they go on the host (etc/, usr/local/lib/hexflow/), with install.sh on top.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { GpuTypeSchema, ModelIdSchema } from "../src/core/gpu";
import { PoolNameSchema } from "../src/api/schemas";
import { GPU_HOST_PROFILES } from "./gpu-host-profiles";

export const KIT_DIR = fileURLToPath(new URL("../deploy/gpu-host/", import.meta.url));
const LIB_DIR = "/usr/local/lib/hexflow";

const httpUrl = z.url({ protocol: /^https?$/ });
const hostname = z.string().regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, "a DNS name such as a100-0.gpu.example.com");
const safePath = z.string().regex(/^\/[A-Za-z0-9._/-]+$/, "an absolute path of letters, digits, dots, dashes and slashes");

/** One host's choices; everything per GPU type comes from GPU_HOST_PROFILES. */
export const HostConfigSchema = z.strictObject({
  gpu: GpuTypeSchema,
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes, at most 63"),
  gateway: httpUrl,
  pool: PoolNameSchema.unwrap().default("default"),
  /** The tunnel's public hostname for this host's vLLM. */
  hostname,
  /** The cloudflared tunnel's name or UUID (`cloudflared tunnel create <name>`). */
  tunnel: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).optional(),
  credentialsFile: safePath.optional(),
  /** How the coordinator reaches vLLM: by default the tunnel hostname over HTTPS. */
  instanceUrl: httpUrl.optional(),
  modelPath: z.string().regex(/^[A-Za-z0-9._/-]+$/).default("meta-llama/Llama-3.1-70B-Instruct"),
  model: ModelIdSchema.default("llama-3.1-70b"),
  port: z.coerce.number().int().min(1024).max(65_535).default(8000),
  /**
   * How the gateway reaches this server (InstanceRegistrationSchema's transport: direct, vpc, access); left
   * out, the coordinator's default. Passed through as registration fields, so the kit needs no change when
   * the gateway learns another.
   */
  transport: z.string().regex(/^[a-z]{1,16}$/).optional(),
  vpcBinding: z.string().regex(/^GPU_VPC(_[A-Z0-9]+)*$/).optional(),
  vllmBin: safePath.default("/opt/vllm/bin/vllm"),
  cloudflaredBin: safePath.default("/usr/bin/cloudflared"),
});
export type HostConfig = z.infer<typeof HostConfigSchema>;

export interface KitFile {
  /** Relative to the output directory, as on the host below /. */
  path: string;
  content: string;
  mode: number;
}

/** Fills `{{NAME}}`; a name the template uses and `vars` lacks is a bug in the kit, not a user mistake. */
export function renderTemplate(template: string, vars: Readonly<Record<string, string>>, name = "template"): string {
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (_m, key: string) => {
    const value = vars[key];
    if (value === undefined) throw new Error(`${name}: no value for {{${key}}}`);
    return value;
  });
}

export function templateVars(c: HostConfig): Record<string, string> {
  const p = GPU_HOST_PROFILES[c.gpu];
  const tunnel = c.tunnel ?? `hexflow-${c.id}`;
  return {
    INSTANCE_ID: c.id,
    POOL: c.pool,
    GATEWAY_URL: c.gateway.replace(/\/+$/, ""),
    INSTANCE_URL: (c.instanceUrl ?? `https://${c.hostname}`).replace(/\/+$/, ""),
    HOSTNAME: c.hostname,
    TUNNEL: tunnel,
    CREDENTIALS_FILE: c.credentialsFile ?? `/etc/cloudflared/${tunnel}.json`,
    GPU: c.gpu,
    GPU_LABEL: p.label,
    SERVED_MODEL: c.model,
    MODEL_PATH: c.modelPath,
    VLLM_PORT: String(c.port),
    VLLM_BIN: c.vllmBin,
    CLOUDFLARED_BIN: c.cloudflaredBin,
    LIB_DIR,
    TENSOR_PARALLEL_SIZE: String(p.tensorParallelSize),
    MAX_NUM_SEQS: String(p.maxNumSeqs),
    MAX_MODEL_LEN: String(p.maxModelLen),
    MAX_NUM_BATCHED_TOKENS: String(p.maxNumBatchedTokens),
    GPU_MEMORY_UTILIZATION: p.gpuMemoryUtilization.toFixed(2),
    KV_TOKENS: String(p.kvTokens),
    REGISTRATION_EXTRA: [c.transport === undefined ? "" : `"transport":"${c.transport}"`, c.vpcBinding === undefined ? "" : `"vpcBinding":"${c.vpcBinding}"`].filter((x) => x !== "").join(","),
  };
}

/** Template file → where it goes on the host. */
function destination(template: string, id: string): string {
  if (template === "gpu-host.env.tmpl") return "etc/hexflow/gpu-host.env";
  if (template === "cloudflared.yml.tmpl") return `etc/cloudflared/hexflow-${id}.yml`;
  if (template.endsWith(".service.tmpl")) return `etc/systemd/system/${template.replace(/\.tmpl$/, "")}`;
  throw new Error(`unknown template ${template}: say where it goes in scripts/gpu-host-render.ts`);
}

export function renderKit(c: HostConfig, kitDir = KIT_DIR): KitFile[] {
  const vars = templateVars(c);
  const templates = readdirSync(join(kitDir, "templates")).filter((f) => f.endsWith(".tmpl")).sort();
  const rendered = templates.map((t) => ({ path: destination(t, c.id), content: renderTemplate(readFileSync(join(kitDir, "templates", t), "utf8"), vars, t), mode: 0o644 }));
  const script = (name: string, path: string): KitFile => ({ path, content: readFileSync(join(kitDir, "bin", name), "utf8"), mode: 0o755 });
  return [...rendered, script("vllm-launch.sh", `usr/local/lib/hexflow/vllm-launch.sh`), script("register.sh", `usr/local/lib/hexflow/register.sh`), script("install.sh", "install.sh")];
}

export function writeKit(files: readonly KitFile[], outDir: string): void {
  for (const f of files) {
    const target = join(outDir, f.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content);
    chmodSync(target, f.mode);
  }
}
