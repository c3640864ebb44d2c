/**
 * Gives every workers test the TRACES schema (migrations/) and the test tenant (tenant-fixture.ts). reset() deletes all data of all bindings,
 * tables included, so the migrations are applied before each test (a no-op when already applied).
 */
import { env } from "cloudflare:workers";
import { applyD1Migrations } from "cloudflare:test";
import { beforeEach } from "vitest";
import { z } from "zod";
import { seedTestTenant } from "./tenant-fixture";

const MigrationsSchema = z.array(z.object({ name: z.string(), queries: z.array(z.string()) }));

beforeEach(async () => {
  await applyD1Migrations(env.TRACES, MigrationsSchema.parse(Reflect.get(env, "TEST_MIGRATIONS")));
  await seedTestTenant();
});
