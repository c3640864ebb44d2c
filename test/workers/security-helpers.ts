/**
 * Shared by the multi-tenancy, fuzz and key-leak tests: the app's route list (so a route added later is
 * covered without editing the tests), tenants created through the admin API, and requests under a key.
 */
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../../src/api/app";
import { STEP } from "../../src/core/chess";
import { admin } from "./helpers";

export interface Route {
  method: string;
  path: string;
}

/** Routes that answer without any credential. Every other route must demand a key or the admin token. */
export const PUBLIC_ROUTES = new Set(["GET /health", "GET /openapi.json"]);

/** Every handler of the app, as method + path; middleware (method ALL) is not a route. */
export function appRoutes(): Route[] {
  const seen = new Map<string, Route>();
  for (const r of app.routes) if (r.method !== "ALL") seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...seen.values()];
}

export const routeName = (r: Route): string => `${r.method} ${r.path}`;
/** The routes behind ADMIN_TOKEN: everything under /admin, and the Prometheus scrape. */
export const isAdminRoute = (r: Route): boolean => r.path === "/admin" || r.path.startsWith("/admin/") || r.path === "/metrics";
export const isPublicRoute = (r: Route): boolean => PUBLIC_ROUTES.has(routeName(r));
/** The routes behind a pool's registration token (src/api/register.ts): neither a tenant key nor ADMIN_TOKEN opens them. */
export const isRegistrationRoute = (r: Route): boolean => r.path.startsWith("/register/");

/** A registration token of the pool, created through the admin API. */
export async function createRegistrationToken(pool = "default", body: unknown = {}): Promise<{ token: string; tokenInfo: { id: string; prefix: string; active: boolean } }> {
  const res = await admin(`/pools/${pool}/registration-tokens`, "POST", body);
  expect(res.status).toBe(201);
  return (await res.json()) as { token: string; tokenInfo: { id: string; prefix: string; active: boolean } };
}

/** The path with each `:param` replaced: by `values[name]`, or by a per-route choice when names clash (`:id`). */
export function concretePath(path: string, values: (param: string, path: string) => string): string {
  return path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(values(name, path)));
}

export const POOL = [{ id: "a100-0", url: "http://127.0.0.1:9001", gpu: "A100", timeScale: 20 }];

export async function registerPool(): Promise<void> {
  for (const i of POOL) expect((await admin("/pools/default/instances", "POST", i)).status).toBe(201);
}

/** A small replay workflow the fake vLLM finishes in a few milliseconds. */
export const REPLAY = { kind: "replay", calls: [{ step: STEP.retriever, inputTokens: 300, outputTokens: 5 }] };

export interface Issued {
  tenant: { id: string; name: string };
  key: string;
  keyInfo: { id: string; prefix: string };
}

export async function createTenant(name: string, config?: unknown): Promise<Issued> {
  const res = await admin("/tenants", "POST", config === undefined ? { name } : { name, config });
  expect(res.status).toBe(201);
  return (await res.json()) as Issued;
}

export async function issueKey(tenantId: string): Promise<Issued["keyInfo"] & { key: string }> {
  const res = await admin(`/tenants/${tenantId}/keys`, "POST", {});
  expect(res.status).toBe(201);
  const body = (await res.json()) as { key: string; keyInfo: Issued["keyInfo"] };
  return { key: body.key, ...body.keyInfo };
}

/** A request carrying exactly this Authorization value, or none at all (unlike api(), which adds the test tenant's key). */
export function withAuth(authorization: string | undefined, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (authorization === undefined) headers.delete("authorization");
  else headers.set("authorization", authorization);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  return exports.default.fetch(`http://gateway.test${path}`, { ...init, headers });
}

export const asKey = (key: string, path: string, init: RequestInit = {}): Promise<Response> => withAuth(`Bearer ${key}`, path, init);

export function postJson(key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return asKey(key, path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** A well-formed key that was never issued: right prefix shape, right secret length. */
export function unknownKey(): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `hfk_${hex}_${"Z".repeat(43)}`;
}

/** The 43-character secret after the prefix: it alone must not leak either. */
export const secretOf = (key: string): string => key.slice("hfk_".length + 12 + 1);
