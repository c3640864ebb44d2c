/**
 * The local stack's credentials: `npm start` creates a tenant ("local") and writes its key and the admin
 * token to the state directory, so `npm run demo` and `npm run loadgen` find them without copying keys
 * around. Another gateway's key comes from --api-key or HEXFLOW_API_KEY.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "./cli";
import { adminFetch } from "./admin-client";

export const LOCAL_STATE_DIR = ".wrangler/state-local";

const CredentialsSchema = z.object({ url: z.string(), apiKey: z.string(), adminToken: z.string() });
export type Credentials = z.infer<typeof CredentialsSchema>;

export function saveCredentials(stateDir: string, c: Credentials): string {
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, "credentials.json");
  writeFileSync(path, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** The key for `url`: the flag, else HEXFLOW_API_KEY, else the one `npm start` saved for that URL. */
export function apiKeyFor(url: string, flag: string | undefined, stateDir = LOCAL_STATE_DIR): string {
  const given = flag ?? process.env.HEXFLOW_API_KEY;
  if (given !== undefined && given !== "") return given;
  const path = join(stateDir, "credentials.json");
  const saved = existsSync(path) ? CredentialsSchema.safeParse(JSON.parse(readFileSync(path, "utf8"))) : undefined;
  if (saved?.success === true && saved.data.url === url) return saved.data.apiKey;
  throw new UsageError(`no API key for ${url}: pass --api-key or set HEXFLOW_API_KEY (npm start saves its own in ${path})`);
}

const TenantListSchema = z.object({ tenants: z.array(z.object({ id: z.string(), name: z.string() })) });
const IssuedSchema = z.object({ key: z.string() });

/**
 * The local tenant and a fresh key for it: created on a fresh state, found by name on a kept one (keys
 * cannot be read back, so a kept state gets a new key; the old ones keep working).
 */
export async function ensureTenant(url: string, adminToken: string, name: string, config: unknown): Promise<string> {
  const created = await adminFetch(url, adminToken, "/tenants", { method: "POST", body: JSON.stringify({ name, config }) });
  if (created.status === 201) return IssuedSchema.parse(await created.json()).key;
  if (created.status !== 409) throw new Error(`creating tenant ${name} failed: ${created.status} ${await created.text()}`);
  const list = TenantListSchema.parse(await (await adminFetch(url, adminToken, "/tenants")).json());
  const tenant = list.tenants.find((t) => t.name === name);
  if (tenant === undefined) throw new Error(`tenant ${name} exists but is not listed`);
  await adminFetch(url, adminToken, `/tenants/${tenant.id}`, { method: "PATCH", body: JSON.stringify(config) });
  const issued = await adminFetch(url, adminToken, `/tenants/${tenant.id}/keys`, { method: "POST", body: JSON.stringify({ label: "npm start" }) });
  if (issued.status !== 201) throw new Error(`issuing a key for ${name} failed: ${issued.status} ${await issued.text()}`);
  return IssuedSchema.parse(await issued.json()).key;
}
