import type { Context } from "hono";
import { prettifyError } from "zod";
import type { $ZodError } from "zod/v4/core";
import { errorBody } from "./errors";

/** zValidator's hook: a failed body or parameter becomes the one error shape, 400, nothing changed. */
export function validationHook<T>(result: { success: true; data: T } | { success: false; error: $ZodError }, c: Context): Response | undefined {
  if (!result.success) return c.json(errorBody("invalid_request", prettifyError(result.error)), 400);
  return undefined;
}
