/** Reading a JSON body through its zod schema: the one way a route turns bytes into a typed value or a 400. */
import type { Context } from "hono";
import type { z } from "zod";
import { jsonDepth, LIMITS } from "../core/limits";
import { errorBody } from "./errors";

export function issueMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid body";
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

/** `whenEmpty` is the value of an absent body, for routes whose body is optional. */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  whenEmpty?: unknown,
): Promise<{ ok: true; value: z.infer<S> } | { ok: false; response: Response }> {
  const text = await c.req.text();
  let raw: unknown = whenEmpty;
  if (text.trim().length > 0 || whenEmpty === undefined) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, response: c.json(errorBody("invalid_request", "the body is not valid JSON"), 400) };
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, response: c.json(errorBody("invalid_request", issueMessage(parsed.error)), 400) };
  return { ok: true, value: parsed.data };
}

/** A JSON body no deeper than LIMITS allows, unchecked otherwise: for routes that hand it to an object which validates it. */
export async function jsonBody(req: Request): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    const value: unknown = await req.json();
    return jsonDepth(value) > LIMITS.http.maxJsonDepth ? { ok: false } : { ok: true, value };
  } catch {
    return { ok: false };
  }
}
