/**
 * The GPU-host kit (deploy/gpu-host): every template rendered for every GPU type, checked for leftovers,
 * the GPU type's vLLM settings and the systemd keys the units rely on; every shell script, as written and
 * as rendered, through shellcheck (required when HEXFLOW_REQUIRE_SHELLCHECK=1, as in CI); the CLI's one-line
 * errors; and register.sh run against a stand-in gateway.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GPU_TYPES } from "../../src/core/gpu";
import { GPU_HOST_PROFILES } from "../../scripts/gpu-host-profiles";
import { HostConfigSchema, KIT_DIR, renderKit, renderTemplate, writeKit, type KitFile } from "../../scripts/gpu-host-render";

const root = new URL("../..", import.meta.url).pathname;
const TOKEN = `hfr_0123456789ab_${"A".repeat(43)}`;

const config = (gpu: string) => HostConfigSchema.parse({ gpu, id: `${gpu.toLowerCase()}-0`, gateway: "https://hexflow.example.com/", pool: "gpus", hostname: `${gpu.toLowerCase()}-0.gpu.example.com` });
const file = (files: KitFile[], suffix: string): string => {
  const f = files.find((x) => x.path.endsWith(suffix));
  if (f === undefined) throw new Error(`no ${suffix} in the kit`);
  return f.content;
};
/** `Key=value` lines of one systemd section. */
function section(unit: string, name: string): Record<string, string> {
  const body = unit.split(/^\[/m).find((s) => s.startsWith(`${name}]`)) ?? "";
  return Object.fromEntries(body.split("\n").slice(1).filter((l) => /^[A-Za-z]+=/.test(l)).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
}
const envOf = (text: string): Record<string, string> => Object.fromEntries(text.split("\n").filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));

const shellcheck = spawnSync("shellcheck", ["--version"], { encoding: "utf8" }).status === 0;
const requireShellcheck = process.env["HEXFLOW_REQUIRE_SHELLCHECK"] === "1";

describe("the GPU-host kit", () => {
  it.each(GPU_TYPES)("renders every template for %s with its vLLM settings and complete systemd units", (gpu) => {
    const files = renderKit(config(gpu));
    const templates = readdirSync(join(KIT_DIR, "templates"));
    expect(files.length).toBe(templates.length + 3);
    for (const f of files) expect(f.content, f.path).not.toMatch(/\{\{|\}\}/);

    const p = GPU_HOST_PROFILES[gpu];
    const env = envOf(file(files, "etc/hexflow/gpu-host.env"));
    expect(env).toMatchObject({
      HEXFLOW_GPU: gpu, HEXFLOW_POOL: "gpus", HEXFLOW_INSTANCE_ID: `${gpu.toLowerCase()}-0`, HEXFLOW_GATEWAY: "https://hexflow.example.com",
      HEXFLOW_INSTANCE_URL: `https://${gpu.toLowerCase()}-0.gpu.example.com`, HEXFLOW_MODEL: "llama-3.1-70b",
      HEXFLOW_VLLM_TENSOR_PARALLEL_SIZE: "4", HEXFLOW_VLLM_MAX_NUM_SEQS: String(p.maxNumSeqs), HEXFLOW_VLLM_MAX_MODEL_LEN: String(p.maxModelLen),
      HEXFLOW_VLLM_GPU_MEMORY_UTILIZATION: p.gpuMemoryUtilization.toFixed(2), HEXFLOW_VLLM_PORT: "8000",
      // Registered capacity equals what vLLM is launched with.
      HEXFLOW_MAX_CONCURRENCY: String(p.maxNumSeqs), HEXFLOW_KV_TOKENS: String(p.kvTokens),
    });
    // vLLM reads VLLM_* itself (VLLM_PORT is its internal port): the kit must not set them by accident.
    expect(Object.keys(env).filter((k) => k.startsWith("VLLM_"))).toEqual([]);

    const tunnel = file(files, `etc/cloudflared/hexflow-${gpu.toLowerCase()}-0.yml`);
    expect(tunnel).toMatch(new RegExp(`^\\s+- hostname: ${gpu.toLowerCase()}-0\\.gpu\\.example\\.com\\n\\s+service: http://127\\.0\\.0\\.1:8000$`, "m"));
    expect(tunnel).toMatch(/^\s+- service: http_status:404\s*$/m);
    expect(tunnel).toMatch(/^credentials-file: \/etc\/cloudflared\/hexflow-[a-z0-9-]+\.json$/m);
    expect(tunnel.trimEnd().split("\n").at(-1)).toMatch(/http_status:404/);

    const units = files.filter((f) => f.path.startsWith("etc/systemd/system/"));
    expect(units.map((u) => u.path.split("/").at(-1)).sort()).toEqual(["hexflow-cloudflared.service", "hexflow-register.service", "hexflow-vllm.service"]);
    for (const u of units) {
      const unit = section(u.content, "Unit");
      const service = section(u.content, "Service");
      expect(unit, u.path).toEqual(expect.objectContaining({ Description: expect.any(String), After: expect.stringContaining("network-online.target"), Wants: expect.stringContaining("network-online.target") }));
      expect(service, u.path).toEqual(expect.objectContaining({ ExecStart: expect.any(String), Restart: expect.stringMatching(/^(always|on-failure)$/), RestartSec: expect.any(String), EnvironmentFile: "/etc/hexflow/gpu-host.env" }));
      expect(section(u.content, "Install"), u.path).toEqual({ WantedBy: "multi-user.target" });
    }
    const register = file(files, "hexflow-register.service");
    expect(section(register, "Unit")["After"]).toContain("hexflow-vllm.service");
    // Wanting the kit's tunnel unit would start it even where a remotely managed tunnel replaced it.
    expect(section(register, "Unit")["Wants"]).not.toContain("hexflow-cloudflared");
    expect(section(register, "Service")).toMatchObject({ Type: "oneshot", LoadCredential: "registration-token:/etc/hexflow/registration-token" });
    expect(section(file(files, "hexflow-vllm.service"), "Service")).toMatchObject({ Restart: "always", User: "hexflow", ExecStart: "/usr/local/lib/hexflow/vllm-launch.sh" });
    expect(section(file(files, "hexflow-cloudflared.service"), "Service")["ExecStart"]).toContain(`--config /etc/cloudflared/hexflow-${gpu.toLowerCase()}-0.yml tunnel run`);
  });

  it("launches vLLM with its settings, metrics on and request logging off", () => {
    const launch = readFileSync(join(KIT_DIR, "bin/vllm-launch.sh"), "utf8");
    for (const flag of ["--tensor-parallel-size", "--max-num-seqs", "--max-model-len", "--gpu-memory-utilization", "--max-num-batched-tokens", "--port", "--served-model-name"]) expect(launch).toContain(flag);
    expect(launch).not.toMatch(/disable-.*metrics|--disable-frontend-multiprocessing/);
    const dir = mkdtempSync(join(tmpdir(), "hexflow-launch-"));
    const fakeVllm = join(dir, "vllm");
    // A fake `vllm` that reports the version in FAKE_VLLM_VERSION and otherwise echoes its arguments.
    writeFileSync(fakeVllm, '#!/usr/bin/env bash\nif [[ "$1" == --version ]]; then echo "$FAKE_VLLM_VERSION"; exit 0; fi\nprintf "%s\\n" "$@"\n', { mode: 0o755 });
    const env = envOf(file(renderKit(config("L40S")), "gpu-host.env"));
    // Without nvidia-smi on PATH: the GPU count check is skipped.
    const launchWith = (version: string) => {
      const r = spawnSync("bash", [join(KIT_DIR, "bin/vllm-launch.sh")], { encoding: "utf8", env: { PATH: `${dir}:/usr/bin:/bin`, ...env, HEXFLOW_VLLM_BIN: fakeVllm, FAKE_VLLM_VERSION: version, HEXFLOW_VLLM_EXTRA_ARGS: "--enable-prompt-tokens-details" } });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split("\n");
    };
    // Request logging is opt-in from vLLM 0.10.2, and 0.12 refuses --disable-log-requests; older releases need it.
    for (const version of ["0.12.0", "0.10.2", "1.0.0", "not a version"]) expect(launchWith(version), version).not.toContain("--disable-log-requests");
    for (const version of ["0.10.1.1", "0.9.2", "0.6.3.post1"]) expect(launchWith(version), version).toContain("--disable-log-requests");
    const args = launchWith("0.12.0");
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(args.slice(0, 2)).toEqual(["serve", "meta-llama/Llama-3.1-70B-Instruct"]);
    expect([after("--tensor-parallel-size"), after("--max-num-seqs"), after("--max-model-len"), after("--gpu-memory-utilization"), after("--host"), after("--served-model-name")]).toEqual(["4", "64", "16384", "0.92", "127.0.0.1", "llama-3.1-70b"]);
    expect(args).toContain("--enable-prompt-tokens-details");
    const missing = spawnSync("bash", [join(KIT_DIR, "bin/vllm-launch.sh")], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  });

  it.skipIf(!shellcheck && !requireShellcheck)("passes shellcheck, every script as written and as rendered", () => {
    expect(shellcheck, "shellcheck is required (HEXFLOW_REQUIRE_SHELLCHECK=1): apt-get install shellcheck").toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "hexflow-kit-"));
    for (const gpu of GPU_TYPES) writeKit(renderKit(config(gpu)), join(dir, gpu));
    const scripts = [
      ...readdirSync(join(KIT_DIR, "bin")).map((f) => join(KIT_DIR, "bin", f)),
      ...GPU_TYPES.flatMap((gpu) => [join(dir, gpu, "install.sh"), ...readdirSync(join(dir, gpu, "usr/local/lib/hexflow")).map((f) => join(dir, gpu, "usr/local/lib/hexflow", f))]),
    ];
    expect(scripts.length).toBe(3 + GPU_TYPES.length * 3);
    for (const s of scripts) {
      expect(readFileSync(s, "utf8"), s).toMatch(/^#!\/usr\/bin\/env bash\n(#.*\n)*set -euo pipefail$/m);
      expect(statSync(s).mode & 0o111, s).not.toBe(0);
    }
    const r = spawnSync("shellcheck", ["--severity=style", ...scripts], { encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
    // shellcheck does find what it should: the check can fail.
    const bad = join(dir, "bad.sh");
    writeFileSync(bad, "#!/usr/bin/env bash\nset -euo pipefail\nrm -rf $1/tmp\n");
    expect(spawnSync("shellcheck", [bad]).status).not.toBe(0);
  });

  it("reports an unfilled name instead of leaving it in a file", () => {
    expect(() => renderTemplate("port {{VLLM_PORT}} {{NOPE}}", { VLLM_PORT: "8000" }, "t")).toThrow("t: no value for {{NOPE}}");
  });

  it("renders from an env file through the CLI, and refuses mistakes with one line and exit 2", () => {
    const dir = mkdtempSync(join(tmpdir(), "hexflow-cli-"));
    const envFile = join(dir, "host.env");
    writeFileSync(envFile, "# an H100 host\nGPU=H100\nID=h100-7\nGATEWAY=https://hexflow.example.com\nHOSTNAME=h100-7.gpu.example.com\nPOOL=prod\nTRANSPORT=vpc\nVPC_BINDING=GPU_VPC_H100_7\n");
    const cli = (args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "scripts/gpu-host.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
    const ok = cli(["--host-env", envFile, "--out", join(dir, "out"), "--port", "8100"]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim().split("\n")).toHaveLength(1);
    const env = envOf(readFileSync(join(dir, "out/etc/hexflow/gpu-host.env"), "utf8"));
    expect(env).toMatchObject({ HEXFLOW_GPU: "H100", HEXFLOW_POOL: "prod", HEXFLOW_VLLM_PORT: "8100", HEXFLOW_VLLM_MAX_NUM_SEQS: "512", HEXFLOW_REGISTRATION_EXTRA: '"transport":"vpc","vpcBinding":"GPU_VPC_H100_7"' });
    expect(statSync(join(dir, "out/usr/local/lib/hexflow/register.sh")).mode & 0o777).toBe(0o755);
    for (const [args, message] of [
      [["--gpu", "B200", "--id", "x", "--gateway", "https://g.example.com", "--hostname", "x.example.com"], /^error: --gpu: /],
      [["--gpu", "A100", "--id", "X_1", "--gateway", "https://g.example.com", "--hostname", "x.example.com"], /^error: --id: /],
      [["--gpu", "A100", "--id", "x", "--hostname", "x.example.com"], /^error: --gateway: /],
      [["--host-env", join(dir, "missing.env")], /^error: env file not found/],
      [["--bogus"], /^error: Unknown option '--bogus'/],
    ] as const) {
      const r = cli([...args]);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  }, 60_000);
});

describe("register.sh", () => {
  async function run(statuses: number[], tokenText = TOKEN): Promise<{ code: number | null; stdout: string; stderr: string; requests: { method: string; url: string; auth: string; body: string }[] }> {
    const requests: { method: string; url: string; auth: string; body: string }[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (req.url === "/health") return void res.writeHead(200).end();
        requests.push({ method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization ?? "", body });
        const status = statuses[requests.length - 1] ?? 500;
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(status < 300 ? { id: "a100-0" } : { error: { code: "x", message: "refused" } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), "hexflow-register-"));
    writeFileSync(join(dir, "token"), `${tokenText}\n`, { mode: 0o600 });
    const env = { ...envOf(file(renderKit(config("A100")), "gpu-host.env")), PATH: process.env["PATH"] ?? "/usr/bin:/bin", HEXFLOW_GATEWAY: `http://127.0.0.1:${port}`, HEXFLOW_VLLM_PORT: String(port), HEXFLOW_REGISTRATION_TOKEN_FILE: join(dir, "token"), HEXFLOW_REGISTRATION_EXTRA: '"capacityFactor":1.5' };
    const child = spawn("bash", [join(KIT_DIR, "bin/register.sh")], { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    server.close();
    return { code, stdout, stderr, requests };
  }

  it("waits for vLLM, then PUTs the registration with the token and says so in one line", async () => {
    const r = await run([201]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("register: a100-0 registered in pool gpus");
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]).toMatchObject({ method: "PUT", url: "/register/pools/gpus/instances/a100-0", auth: `Bearer ${TOKEN}` });
    expect(JSON.parse(r.requests[0]?.body ?? "")).toEqual({ id: "a100-0", url: "https://a100-0.gpu.example.com", gpu: "A100", model: "llama-3.1-70b", maxConcurrency: 256, kvTokens: 400_000, capacityFactor: 1.5 });
  });

  it("stops at a refused token without printing it, and refuses a file that holds no token", async () => {
    const refused = await run([401]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/refused the registration token/);
    expect(refused.stdout + refused.stderr).not.toContain(TOKEN.slice(17));
    const notAToken = await run([201], "hfk_0123456789ab_" + "A".repeat(43));
    expect(notAToken.code).toBe(2);
    expect(notAToken.requests).toEqual([]);
  });
});
