/**
 * The connector's HTTP API, run next to an on-prem database behind a Cloudflare Tunnel:
 *   GET /health, GET /v1/schema, POST /v1/query {sql, maxRows?}.
 * Every request carries the bearer token; every error is JSON {error:{code,message}}. SQL passes the
 * read-only guard before the database sees it, and the backend enforces read-only access again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { checkReadOnlySql } from "../core/sql-guard";
import type { SqlBackend } from "./backend";
import { bearerChecker, readJsonBody, sendError, sendJson } from "./http-io";

export interface ConnectorConfig {
  backend: SqlBackend;
  token: string;
  /** The most rows one query returns; a request may ask for fewer. */
  maxRows: number;
  maxBodyBytes?: number;
}

export const MIN_TOKEN_LENGTH = 16;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export const QueryRequestSchema = z.strictObject({
  sql: z.string().max(DEFAULT_MAX_BODY_BYTES),
  maxRows: z.number().int().nonnegative().optional(),
});

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function routes(config: ConnectorConfig): Map<string, Map<string, Handler>> {
  const { backend } = config;
  const maxBodyBytes = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  const health: Handler = async (_req, res) => sendJson(res, 200, { ok: true });

  const schema: Handler = async (_req, res) => {
    const result = await backend.schema();
    if (result.ok) sendJson(res, 200, result.value);
    else sendError(res, result.error.code, result.error.message);
  };

  const query: Handler = async (req, res) => {
    const body = await readJsonBody(req, maxBodyBytes);
    if (!body.ok) return sendError(res, body.code, body.message, body.code === "payload_too_large" ? { connection: "close" } : {});
    const parsed = QueryRequestSchema.safeParse(body.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendError(res, "invalid_request", `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
    }
    const guard = checkReadOnlySql(parsed.data.sql, backend.dialect);
    if (!guard.ok) return sendError(res, guard.error.code, guard.error.message);
    // A request may lower the server's cap, never raise it.
    const maxRows = Math.min(parsed.data.maxRows ?? config.maxRows, config.maxRows);
    const started = performance.now();
    const result = await backend.query(guard.value.statement, maxRows);
    const elapsedMs = Math.round((performance.now() - started) * 10) / 10;
    if (!result.ok) return sendError(res, result.error.code, result.error.message);
    const { columns, rows, truncated } = result.value;
    sendJson(res, 200, { columns, rows, rowCount: rows.length, truncated, elapsedMs });
  };

  return new Map([
    ["/health", new Map([["GET", health]])],
    ["/v1/schema", new Map([["GET", schema]])],
    ["/v1/query", new Map([["POST", query]])],
  ]);
}

export function createConnectorServer(config: ConnectorConfig): Server {
  if (config.token.length < MIN_TOKEN_LENGTH) throw new Error(`the token must have at least ${MIN_TOKEN_LENGTH} characters`);
  const authorized = bearerChecker(config.token);
  const table = routes(config);
  return createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://connector").pathname;
    const handle = async () => {
      // Before routing, so that without the token nothing, not even which paths exist, is revealed.
      if (!authorized(req.headers.authorization)) {
        return sendError(res, "unauthorized", "missing or wrong bearer token", { "www-authenticate": "Bearer" });
      }
      const methods = table.get(path);
      if (methods === undefined) return sendError(res, "not_found", `no route ${req.method ?? ""} ${path}`);
      const handler = methods.get(req.method ?? "");
      if (handler === undefined) {
        return sendError(res, "method_not_allowed", `${path} accepts ${[...methods.keys()].join(", ")}`, { allow: [...methods.keys()].join(", ") });
      }
      await handler(req, res);
    };
    handle().catch((e: unknown) => {
      process.stderr.write(`connector: ${req.method ?? ""} ${path} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      if (!res.headersSent) sendError(res, "internal_error", "the connector failed; see its log");
      else res.destroy();
    });
  });
}

export interface RunningConnector {
  url: string;
  close(): Promise<void>;
}

/** Listens on `host:port` (0 picks a free port); close() stops the server and the backend. */
export async function startConnector(config: ConnectorConfig, host: string, port: number): Promise<RunningConnector> {
  const server = createConnectorServer(config);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address: AddressInfo | string | null = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${boundPort}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await config.backend.close();
    },
  };
}
