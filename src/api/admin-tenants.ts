/**
 * Tenants and their API keys, under the admin credential. A key is in a response body exactly once:
 * when it is issued (with the tenant, by itself, or by a rotation); lists show only its prefix.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { TenantConfigSchema, TenantConfigUpdateSchema, TenantIdSchema, TenantNameSchema } from "../core/tenant";
import { createTenant, expireKey, getTenant, issueKey, listKeys, listTenants, updateTenantConfig, type Tenant } from "../db/tenants";
import { errorBody } from "./errors";
import { issueMessage, readJson } from "./json-body";

export const CreateTenantSchema = z.strictObject({ name: TenantNameSchema, config: TenantConfigSchema.optional() });
export const KeyLabelSchema = z.strictObject({ label: z.string().trim().min(1).max(64).optional() });
/** A rotation may keep the old key working a while, so clients can switch without a failed request. */
export const RotateSchema = z.strictObject({ graceS: z.number().int().min(0).max(7 * 86_400).default(0), label: z.string().trim().min(1).max(64).optional() });
export const KeyIdSchema = z.string().regex(/^key_[0-9a-f]{16}$/);

type Ctx = Context<{ Bindings: Env }>;

const noTenant = (c: Ctx) => c.json(errorBody("not_found", "no such tenant"), 404);
const noKey = (c: Ctx) => c.json(errorBody("not_found", "no such key"), 404);

async function tenantOf(c: Ctx): Promise<Tenant | undefined> {
  const id = c.req.param("tenant");
  return id !== undefined && TenantIdSchema.safeParse(id).success ? getTenant(c.env.TRACES, id) : undefined;
}

export const adminTenants = new Hono<{ Bindings: Env }>()
  .post("/", async (c) => {
    const body = await readJson(c, CreateTenantSchema);
    if (!body.ok) return body.response;
    const nowMs = Date.now();
    const tenant = await createTenant(c.env.TRACES, body.value.name, body.value.config ?? TenantConfigSchema.parse({}), nowMs);
    if (tenant === "exists") return c.json(errorBody("conflict", `a tenant named ${body.value.name} exists`), 409);
    const { key, summary } = await issueKey(c.env.TRACES, tenant.id, "first key", nowMs);
    return c.json({ tenant, key, keyInfo: summary }, 201);
  })
  .get("/", async (c) => c.json({ tenants: await listTenants(c.env.TRACES) }))
  .get("/:tenant", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    const usage = await c.env.TENANT.getByName(tenant.id).usage(tenant.config.quota);
    return c.json({ tenant, keys: await listKeys(c.env.TRACES, tenant.id, Date.now()), usage });
  })
  .patch("/:tenant", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    const body = await readJson(c, TenantConfigUpdateSchema);
    if (!body.ok) return body.response;
    const config = TenantConfigSchema.safeParse({ ...tenant.config, ...body.value });
    if (!config.success) return c.json(errorBody("invalid_request", issueMessage(config.error)), 400);
    await updateTenantConfig(c.env.TRACES, tenant.id, config.data);
    return c.json({ tenant: { ...tenant, config: config.data } });
  })
  .get("/:tenant/keys", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    return c.json({ keys: await listKeys(c.env.TRACES, tenant.id, Date.now()) });
  })
  .post("/:tenant/keys", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    const body = await readJson(c, KeyLabelSchema, {});
    if (!body.ok) return body.response;
    const { key, summary } = await issueKey(c.env.TRACES, tenant.id, body.value.label ?? null, Date.now());
    return c.json({ key, keyInfo: summary }, 201);
  })
  .post("/:tenant/keys/:key/rotate", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    const keyId = c.req.param("key");
    if (!KeyIdSchema.safeParse(keyId).success) return noKey(c);
    const body = await readJson(c, RotateSchema, {});
    if (!body.ok) return body.response;
    const nowMs = Date.now();
    const old = (await listKeys(c.env.TRACES, tenant.id, nowMs)).find((k) => k.id === keyId);
    if (old === undefined) return noKey(c);
    if (!old.active) return c.json(errorBody("conflict", "the key is already revoked or expired; issue a new one instead"), 409);
    const { key, summary } = await issueKey(c.env.TRACES, tenant.id, body.value.label ?? old.label, nowMs);
    const replaced = await expireKey(c.env.TRACES, tenant.id, keyId, nowMs + body.value.graceS * 1000, nowMs, summary.id);
    return c.json({ key, keyInfo: summary, replaced }, 201);
  })
  .delete("/:tenant/keys/:key", async (c) => {
    const tenant = await tenantOf(c);
    if (tenant === undefined) return noTenant(c);
    const keyId = c.req.param("key");
    if (!KeyIdSchema.safeParse(keyId).success) return noKey(c);
    const nowMs = Date.now();
    const revoked = await expireKey(c.env.TRACES, tenant.id, keyId, nowMs, nowMs);
    return revoked === undefined ? noKey(c) : c.json({ keyInfo: revoked });
  });
