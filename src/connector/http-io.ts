/** The node:http chores the connector's routes share: JSON out, bounded JSON in, bearer tokens. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export type ConnectorErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "not_found"
  | "method_not_allowed"
  | "payload_too_large"
  | "empty_statement"
  | "multiple_statements"
  | "not_read_only"
  | "sql_error"
  | "statement_timeout"
  | "database_unavailable"
  | "internal_error";

export const STATUS: Record<ConnectorErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  empty_statement: 422,
  multiple_statements: 422,
  not_read_only: 422,
  sql_error: 422,
  statement_timeout: 408,
  database_unavailable: 503,
  internal_error: 500,
};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

export function sendError(res: ServerResponse, code: ConnectorErrorCode, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, STATUS[code], { error: { code, message } }, headers);
}

export type BodyResult = { ok: true; value: unknown } | { ok: false; code: "invalid_request" | "payload_too_large"; message: string };

/** The parsed JSON body; stops reading once it passes `limit` bytes. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const tooLarge: BodyResult = { ok: false, code: "payload_too_large", message: `the request body is larger than ${limit} bytes` };
  if (Number(req.headers["content-length"] ?? 0) > limit) return tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > limit) return tooLarge;
    chunks.push(buf);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return { ok: true, value };
  } catch (e) {
    return { ok: false, code: "invalid_request", message: `the request body is not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * Checks `Authorization: Bearer <token>` in constant time: comparing digests makes the time
 * independent of where the first differing character is, and of the token's length.
 */
export function bearerChecker(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = /^Bearer ([^\s]+)\s*$/i.exec(header ?? "");
    return timingSafeEqual(digest(match?.[1] ?? ""), expected);
  };
}
