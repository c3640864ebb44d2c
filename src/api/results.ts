import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorBody } from "./errors";
import type { ErrorCode } from "../objects/result";

const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  not_found: 404,
  conflict: 409,
  no_instance: 503,
  unavailable: 503,
};

export function statusFor(code: ErrorCode): ContentfulStatusCode {
  return STATUS[code];
}

/** An expected failure from a Durable Object, as the HTTP error clients see. */
export function failure(c: Context, error: { code: ErrorCode; message: string }): Response {
  return c.json(errorBody(error.code, error.message), STATUS[error.code]);
}
