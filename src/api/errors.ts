/** The one error mapping of the HTTP API: every error response is `{ error: { code, message } }`. */
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { redactKeys } from "../db/api-keys";

/** The one error shape every endpoint returns. */
export interface ErrorBody {
  error: { code: string; message: string };
}

export function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message: redactKeys(message) } };
}

/** Maps an HTTP status to the stable error code clients see. */
export function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 422:
      return "unprocessable";
    case 429:
      return "rate_limited";
    default:
      return status >= 500 ? "internal" : "error";
  }
}

/** Central error mapping: HTTPException keeps its status; anything else is a 500 `internal` (details only in logs). */
export const handleError: ErrorHandler = (err, c) => {
  if (err instanceof HTTPException) {
    return c.json(errorBody(codeForStatus(err.status), err.message || "request failed"), err.status);
  }
  console.error("unhandled error", err);
  return c.json(errorBody("internal", "internal error"), 500);
};

export const handleNotFound: NotFoundHandler = (c) =>
  c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404);
