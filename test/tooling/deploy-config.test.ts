/**
 * Issue 10, production configuration: `wrangler deploy --dry-run --env production` succeeds for the gateway
 * and the tuner (the bundle builds and wrangler accepts every binding; nothing is uploaded, no account is
 * needed), the production environments repeat every binding of the default ones (wrangler inherits none),
 * and the two Workers' production configs name each other and share one traces database.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GATEWAY_CONFIG, TUNER_CONFIG, bindingNames, dryRunDeploy, missingBindings, readWranglerConfig } from "../../scripts/lib/deploy-config.ts";

const out = mkdtempSync(path.join(tmpdir(), "hexflow-deploy-dry-run-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const SECRETS = ["ADMIN_TOKEN", "ACCESS_CLIENT_ID", "ACCESS_CLIENT_SECRET", "VLLM_API_KEY"];

describe("production deploy config", () => {
  it.each([
    ["gateway", GATEWAY_CONFIG, /VPC Service/],
    ["tuner", TUNER_CONFIG, /CoordinatorObject, defined in hexflow-gateway-production/],
  ])("wrangler deploy --dry-run --env production succeeds for the %s", async (name, config, binding) => {
    const outdir = path.join(out, name);
    const r = await dryRunDeploy(config, "production", outdir);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/--dry-run: exiting now/);
    expect(r.output).toMatch(binding);
    expect(existsSync(path.join(outdir, "index.js"))).toBe(true);
  }, 120_000);

  it.each([
    ["gateway", GATEWAY_CONFIG],
    ["tuner", TUNER_CONFIG],
  ])("the %s's production environment declares every binding of its default environment", (_name, config) => {
    const defaults = readWranglerConfig(config);
    const production = readWranglerConfig(config, "production");
    expect(missingBindings(defaults, production)).toEqual([]);
    // Secrets are put with `wrangler secret put`, never written as vars.
    for (const env of [defaults, production]) for (const s of SECRETS) expect(Object.keys(env.vars)).not.toContain(s);
  });

  it("the check itself notices a missing binding", () => {
    const defaults = readWranglerConfig(GATEWAY_CONFIG);
    const production = readWranglerConfig(GATEWAY_CONFIG, "production");
    const lacking = { ...production, d1_databases: production.d1_databases.filter((d) => d.binding !== "TRACES"), vars: {} };
    expect(missingBindings(defaults, lacking)).toEqual(["d1_databases:TRACES", "vars:POOL_ROUTES", "vars:QUERYABLE_D1", "vars:WORKFLOW_STALL_S"]);
    expect(bindingNames(defaults)).toContain("durable_objects:TENANT");
    expect(bindingNames(defaults)).toContain("assets:ASSETS");
  });

  it("the production gateway and tuner name each other, share TRACES, keep the cron, and inherit the migrations", () => {
    const gateway = readWranglerConfig(GATEWAY_CONFIG, "production");
    const tuner = readWranglerConfig(TUNER_CONFIG, "production");
    expect((gateway.services ?? []).find((s) => s.binding === "TUNER")?.service).toBe(tuner.name);
    expect(tuner.durable_objects.bindings.find((b) => b.name === "COORDINATOR")?.script_name).toBe(gateway.name);
    const traces = (c: typeof gateway) => c.d1_databases.find((d) => d.binding === "TRACES")?.database_id;
    expect(traces(tuner)).toBe(traces(gateway));
    expect(tuner.triggers.crons).toEqual(readWranglerConfig(TUNER_CONFIG).triggers.crons);
    expect(tuner.limits).toEqual(readWranglerConfig(TUNER_CONFIG).limits);
    expect(gateway.migrations).toEqual(readWranglerConfig(GATEWAY_CONFIG).migrations);
    // The VPC binding is remote-only: production declares it, the local (default) environment must not.
    expect(gateway.vpc_services.map((v) => v.binding)).toContain("GPU_VPC");
    expect(readWranglerConfig(GATEWAY_CONFIG).vpc_services).toEqual([]);
    expect([gateway.name, tuner.name]).not.toContain(undefined);
    expect(gateway.name).not.toBe(readWranglerConfig(GATEWAY_CONFIG).name);
  });
});
