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
        // Runs inside workerd (Miniflare) with the gateway Worker from wrangler.toml.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            remoteBindings: false,
            miniflare: { bindings: { ADMIN_TOKEN: "test-admin-token-0123456789" } },
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
