import { NO_KEEPALIVE } from "./replay";

/** One admin request to a local gateway: `path` is under /admin, bodies are JSON. */
export function adminFetch(url: string, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}/admin${path}`, { ...init, headers: { ...NO_KEEPALIVE, authorization: `Bearer ${token}`, "content-type": "application/json" } });
}
