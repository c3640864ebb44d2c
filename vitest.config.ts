import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

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
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Runs inside workerd (Miniflare) with the gateway Worker from wrangler.toml.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            remoteBindings: false,
            miniflare: { bindings: { ADMIN_TOKEN: "test-admin-token-0123456789", DISPATCH_SWEEP: process.env.HEXFLOW_DISPATCH_SWEEP ?? "0" } },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
        },
      },
    ],
  },
});
