/** The tenant every workers test talks as unless it says otherwise: seeded in D1 before each test. */
import { env } from "cloudflare:workers";
import { hashKey } from "../../src/db/api-keys";

export const TEST_TENANT_ID = "tn_00000000000000a1";
export const TEST_KEY = `hfk_0000000000a1_${"k".repeat(43)}`;

/** Quotas high enough that only tests about quotas ever meet them. */
export const TEST_TENANT_CONFIG = {
  slo: { defaultScale: 5, minScale: 0.5, maxScale: 100_000 },
  quota: { workflowsPerS: 10_000, burst: 100_000, maxConcurrent: 100_000 },
  overload: "reject",
};

export async function seedTestTenant(): Promise<void> {
  await env.TRACES.batch([
    env.TRACES.prepare("INSERT OR IGNORE INTO tenants (id, name, config, created_at_ms) VALUES (?, 'test', ?, 0)").bind(TEST_TENANT_ID, JSON.stringify(TEST_TENANT_CONFIG)),
    env.TRACES.prepare("INSERT OR IGNORE INTO api_keys (id, tenant_id, prefix, hash, label, created_at_ms) VALUES ('key_00000000000000a1', ?, '0000000000a1', ?, 'test', 0)").bind(TEST_TENANT_ID, await hashKey(TEST_KEY)),
  ]);
}
