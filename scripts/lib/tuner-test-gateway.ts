/**
 * The gateway as an auxiliary Worker of the tuner's workerd tests: the tuner binds the gateway's
 * CoordinatorObject by script_name, and vitest-pool-workers runs auxiliary Workers only as built
 * JavaScript, so the gateway is bundled here with wrangler (no deploy: --dry-run).
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `tuner`: the Worker that the gateway's TUNER service binding (wrangler.toml) names here, e.g. the tuner
 * under test (`vitest-pool-workers-runner-<project>`, the name vitest-pool-workers gives a project's Worker).
 */
export function gatewayAuxWorker(bindings: Record<string, string>, tuner?: string) {
  const outdir = path.join(ROOT, ".wrangler", "tmp", "tuner-test-gateway");
  execFileSync(path.join(ROOT, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", outdir, "-c", path.join(ROOT, "wrangler.toml")], { cwd: ROOT, stdio: "pipe" });
  const sqlite = (className: string) => ({ className, useSQLite: true });
  return {
    name: "hexflow-gateway",
    modules: true,
    scriptPath: path.join(outdir, "index.js"),
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    durableObjects: { WORKFLOW: sqlite("WorkflowObject"), COORDINATOR: sqlite("CoordinatorObject"), GPU_INSTANCE: sqlite("GpuInstanceObject"), CATALOG: sqlite("DatabaseCatalogObject") },
    // Same database ids as wrangler.toml, so the tuner's TRACES is the gateway's.
    d1Databases: { TRACES: "00000000-0000-4000-8000-000000000001", DEMO_DB: "00000000-0000-4000-8000-000000000000" },
    bindings: { QUERYABLE_D1: "DEMO_DB", ...bindings },
    ...(tuner === undefined ? {} : { serviceBindings: { TUNER: tuner } }),
  };
}
