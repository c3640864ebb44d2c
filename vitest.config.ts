import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { Response } from "miniflare";
import { defineConfig } from "vitest/config";
import { fakeVpcBinding } from "./scripts/lib/fake-vpc-binding.ts";
import { gatewayAuxWorker } from "./scripts/lib/tuner-test-gateway.ts";

export default defineConfig({
  test: {
    projects: [
      {
        // Pure TypeScript in Node: src/core, src/sim, the emulator, and repo tooling.
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts", "test/tooling/**/*.test.ts"],
        },
      },
      {
        // The real processes: emulated vLLM servers and wrangler dev, driven over HTTP.
        test: {
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          // One stack at a time: each file starts wrangler, workerd and emulators (and one Chromium), and on a
          // 2-core machine two of them side by side stretch the chaos run's timing past its bounds.
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Runs inside workerd (Miniflare) with the gateway Worker from wrangler.toml.
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./wrangler.toml" },
            remoteBindings: false,
            miniflare: {
              bindings: {
                ADMIN_TOKEN: "test-admin-token-0123456789",
                DISPATCH_SWEEP: process.env.HEXFLOW_DISPATCH_SWEEP ?? "0",
                // test/workers/fuzz.test.ts: empty for its fixed seed, or an integer to explore another.
                FUZZ_SEED: process.env.HEXFLOW_FUZZ_SEED ?? "",
                // The TRACES schema, read here in Node and applied in workerd by test/workers/setup-d1.ts.
                TEST_MIGRATIONS: await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url))),
                // The Access service token for instances with transport "access" (test/workers/transport.test.ts).
                ACCESS_CLIENT_ID: "test-access-id.access",
                ACCESS_CLIENT_SECRET: "test-access-secret-0123456789abcdef",
              },
              // wrangler.toml binds the tuner Worker as TUNER; it does not run in this project, so TUNER
              // answers like a tuner that is down (the tuner project runs the real one behind the gateway).
              serviceBindings: {
                TUNER: () => Response.json({ error: { code: "unavailable", message: "the tuner Worker does not run in the workers test project" } }, { status: 503 }),
                // Workers VPC bindings cannot run locally (only wrangler.toml's production env declares GPU_VPC): a fake
                // vLLM behind a tunnel under that name, which records what reaches it (test/workers/transport.test.ts).
                GPU_VPC: fakeVpcBinding(),
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          setupFiles: ["./test/workers/setup-d1.ts"],
        },
      },
      {
        // The tuner Worker (workers/tuner/wrangler.toml) in workerd, with the real gateway beside it as an
        // auxiliary Worker: the tuner's COORDINATOR binding names the gateway's script, and the gateway's
        // TUNER binding names this project's Worker (vitest-pool-workers calls it "vitest-pool-workers-runner-<project>").
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./workers/tuner/wrangler.toml" },
            remoteBindings: false,
            miniflare: {
              bindings: { ADMIN_TOKEN: "test-admin-token-0123456789", TEST_MIGRATIONS: await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url))) },
              // For the tests only: the gateway, to call its admin routes (POST /admin/pools/:pool/tune comes back here through TUNER).
              serviceBindings: { TEST_GATEWAY: "hexflow-gateway" },
              workers: [gatewayAuxWorker({ ADMIN_TOKEN: "test-admin-token-0123456789" }, "vitest-pool-workers-runner-tuner")],
            },
          })),
        ],
        test: {
          name: "tuner",
          include: ["test/tuner/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
