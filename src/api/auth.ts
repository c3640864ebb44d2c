/**
 * Tenant authentication for every public route: `Authorization: Bearer <key>`. A missing, malformed,
 * unknown, revoked or expired key gets the same 401, so an answer never says which keys exist. The key
 * is never logged and never echoed: messages name no part of it.
 */
import { createMiddleware } from "hono/factory";
import { bearer } from "../db/api-keys";
import { authenticate, touchKey, type Tenant } from "../db/tenants";
import { errorBody } from "./errors";

export type TenantEnv = { Bindings: Env; Variables: { tenant: Tenant } };

export const UNAUTHORIZED = errorBody("unauthorized", "a valid API key is required: Authorization: Bearer <key>");

export const requireTenant = createMiddleware<TenantEnv>(async (c, next) => {
  const key = bearer(c.req.header("authorization"));
  const nowMs = Date.now();
  let auth: Awaited<ReturnType<typeof authenticate>>;
  try {
    auth = key === undefined ? undefined : await authenticate(c.env.TRACES, key, nowMs).catch(() => authenticate(c.env.TRACES, key, nowMs));
  } catch {
    // D1 failed twice (locally: SQLITE_BUSY between the gateway and tuner processes): a retryable refusal, not a 500.
    console.error("authentication unavailable: the tenants database did not answer");
    c.header("retry-after", "1");
    return c.json(errorBody("unavailable", "authentication is unavailable for a moment; retry"), 503);
  }
  if (auth === undefined) {
    c.header("www-authenticate", 'Bearer realm="hexflow"');
    return c.json(UNAUTHORIZED, 401);
  }
  if (auth.touch) c.executionCtx.waitUntil(touchKey(c.env.TRACES, auth.keyId, nowMs).catch(() => console.error(`key ${auth.keyId}: last-used not recorded`)));
  c.set("tenant", auth.tenant);
  await next();
  return undefined;
});
