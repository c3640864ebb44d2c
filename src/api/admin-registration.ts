/**
 * Registration tokens of a pool, under the admin credential: what a GPU host kit (deploy/gpu-host) carries
 * to register its vLLM server in that pool (src/api/register.ts). A token is in a response body exactly
 * once, when it is created; lists show only its prefix.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { createRegistrationToken, listRegistrationTokens, revokeRegistrationToken } from "../db/registration-tokens";
import { errorBody } from "./errors";
import { readJson } from "./json-body";
import { PoolNameSchema } from "./schemas";

const DAY_S = 86_400;

/**
 * A host re-registers with its token after every reboot, so the default outlives routine maintenance;
 * every token still ends (a year at most), and an operator revokes one at once.
 */
export const CreateRegistrationTokenSchema = z.strictObject({
  label: z.string().trim().min(1).max(64).optional(),
  ttlS: z.number().int().min(60).max(365 * DAY_S).default(30 * DAY_S),
});
export const RegistrationTokenIdSchema = z.string().regex(/^rt_[0-9a-f]{16}$/);
export const PoolParamSchema = PoolNameSchema.unwrap();

type Ctx = Context<{ Bindings: Env }>;

function poolOf(c: Ctx): string | undefined {
  const parsed = PoolParamSchema.safeParse(c.req.param("pool"));
  return parsed.success ? parsed.data : undefined;
}

const noToken = (c: Ctx) => c.json(errorBody("not_found", "no such registration token in this pool"), 404);
const badPool = (c: Ctx) => c.json(errorBody("invalid_request", "pool: lowercase letters, digits and dashes, at most 63"), 400);

export const adminRegistration = new Hono<{ Bindings: Env }>()
  .post("/pools/:pool/registration-tokens", async (c) => {
    const pool = poolOf(c);
    if (pool === undefined) return badPool(c);
    const body = await readJson(c, CreateRegistrationTokenSchema, {});
    if (!body.ok) return body.response;
    const nowMs = Date.now();
    const { token, summary } = await createRegistrationToken(c.env.TRACES, pool, body.value.label ?? null, body.value.ttlS * 1000, nowMs);
    return c.json({ token, tokenInfo: summary }, 201);
  })
  .get("/pools/:pool/registration-tokens", async (c) => {
    const pool = poolOf(c);
    if (pool === undefined) return badPool(c);
    return c.json({ tokens: await listRegistrationTokens(c.env.TRACES, pool, Date.now()) });
  })
  .delete("/pools/:pool/registration-tokens/:token", async (c) => {
    const pool = poolOf(c);
    if (pool === undefined) return badPool(c);
    const id = c.req.param("token");
    if (!RegistrationTokenIdSchema.safeParse(id).success) return noToken(c);
    const revoked = await revokeRegistrationToken(c.env.TRACES, pool, id, Date.now());
    return revoked === undefined ? noToken(c) : c.json({ tokenInfo: revoked });
  });
