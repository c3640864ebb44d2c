/** The few node:http chores every route shares. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody, type ApiError } from "./errors";

/** Request bodies beyond this are refused: a 32k-token prompt is ~130 kB of text. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, e: ApiError): void {
  sendJson(res, e.status, errorBody(e));
}

/** The parsed JSON body, or the 400 vLLM answers for one it cannot decode. */
export async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; error: ApiError }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const part: unknown = chunk;
    const buf = Buffer.isBuffer(part) ? part : Buffer.from(String(part));
    size += buf.length;
    if (size > MAX_BODY_BYTES) return { ok: false, error: { status: 400, message: "Request body too large." } };
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, error: { status: 400, message: "The request body is not valid JSON." } };
  }
}
