import { createMiddleware } from "hono/factory";
import { sameSecret } from "../db/api-keys";
import { errorBody } from "./errors";

/** ADMIN_TOKEN from the Worker's environment (never a tenant key): the /admin routes and /metrics. */
export const requireAdmin = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const token = c.env.ADMIN_TOKEN;
  if (typeof token !== "string" || token.length < 16) return c.json(errorBody("unavailable", "admin routes are disabled: set ADMIN_TOKEN (16+ characters)"), 503);
  const given = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  if (!sameSecret(given, token)) return c.json(errorBody("unauthorized", "admin credential required"), 401);
  await next();
  return undefined;
});
