/**
 * One emulated vLLM server: vLLM's OpenAI-compatible routes (VLLM_API section 1) plus the admin
 * routes for fault injection, on one node:http listener.
 */
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { resolveConfig, type EmulatorConfig, type EmulatorOptions } from "./config";
import { EngineLoop } from "./engine-loop";
import { FAULT_HEADER, FaultState, faultError } from "./faults";
import { serveGeneration } from "./generate";
import { readJson, sendError, sendJson } from "./http";
import { EmulatorMetrics } from "./metrics";
import { AdminFaultSchema, AdminHealthSchema, describeIssues } from "./openai-shapes";
import { planRequest, type Endpoint } from "./request-plan";

/** The vLLM release whose API shapes the emulator follows (nested error bodies, V1 metrics). */
export const EMULATED_VLLM_VERSION = "0.11.0";

export interface StartOptions extends EmulatorOptions {
  /** Called once after an injected `die` has closed the server (the CLI exits, as a crash would). */
  onDie?: () => void;
  /**
   * A file that gets one JSON line per generation request the server accepts, before any fault applies:
   * `{"callId": <x-hexflow-call-id or null>, "atMs": <epoch ms>, "port": <port>}`. Appended synchronously,
   * so the lines survive the process being killed (the chaos harness counts executions per call from it).
   */
  callLog?: string;
}

/** The header hexflow's upstream client names each call with. */
export const CALL_ID_HEADER = "x-hexflow-call-id";

export interface EmulatorHandle {
  url: string;
  port: number;
  config: EmulatorConfig;
  close(): Promise<void>;
}

class EmulatedServer {
  readonly loop: EngineLoop;
  readonly metrics: EmulatorMetrics;
  readonly faults = new FaultState();
  readonly server: Server;
  private dead = false;
  /** Set once the listener is up (the call log names it). */
  port = 0;
  private readonly createdS = Math.floor(Date.now() / 1000);

  constructor(
    readonly cfg: EmulatorConfig,
    private readonly onDie: (() => void) | undefined,
    private readonly callLog: string | undefined,
  ) {
    this.metrics = new EmulatorMetrics({
      servedModelName: cfg.servedModelName,
      gpu: cfg.gpu,
      timeScale: cfg.timeScale,
      blockSize: cfg.capacity.blockSize,
      numGpuBlocks: Math.floor(cfg.capacity.kvTokens / cfg.capacity.blockSize),
    });
    this.loop = new EngineLoop(cfg, this.metrics);
    this.server = createServer((req, res) => {
      this.route(req, res).catch((e: unknown) => {
        if (!res.headersSent) sendError(res, { status: 500, message: e instanceof Error ? e.message : String(e) });
        else res.destroy();
      });
    });
  }

  /** As a crashed server: the listener goes and every open connection is cut. */
  die(): void {
    if (this.dead) return;
    this.dead = true;
    this.loop.stop();
    this.server.close();
    this.server.closeAllConnections();
    this.onDie?.();
  }

  close(): Promise<void> {
    this.loop.stop();
    return new Promise((resolve) => {
      // Closing an already dead (closed) server reports ERR_SERVER_NOT_RUNNING: nothing left to do.
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://emulator").pathname;
    const route = `${req.method ?? "GET"} ${path}`;
    switch (route) {
      case "GET /health":
      case "GET /ping":
        res.writeHead(this.faults.healthy ? 200 : 503, { "content-length": 0 });
        res.end();
        return;
      case "GET /version":
        return sendJson(res, 200, { version: EMULATED_VLLM_VERSION });
      case "GET /v1/models":
        return sendJson(res, 200, this.models());
      case "GET /metrics": {
        const text = await this.metrics.text();
        res.writeHead(200, { "content-type": this.metrics.contentType });
        res.end(text);
        return;
      }
      case "POST /v1/completions":
        return this.generate(req, res, "completion");
      case "POST /v1/chat/completions":
        return this.generate(req, res, "chat");
      case "POST /admin/fault":
      case "POST /admin/health":
        return this.admin(req, res, path);
      default: {
        const known = ["/health", "/ping", "/version", "/v1/models", "/metrics", "/v1/completions", "/v1/chat/completions", "/admin/fault", "/admin/health"];
        // FastAPI's answers for an unknown path and a known path with the wrong method.
        if (known.includes(path)) return sendJson(res, 405, { detail: "Method Not Allowed" });
        return sendJson(res, 404, { detail: "Not Found" });
      }
    }
  }

  private async generate(req: IncomingMessage, res: ServerResponse, endpoint: Endpoint): Promise<void> {
    const body = await readJson(req);
    this.logCall(req);
    const fault = this.faults.take(req.headers[FAULT_HEADER]);
    if (typeof fault === "object") return sendError(res, fault);
    if (fault === "error500" || fault === "error503") return sendError(res, faultError(fault));
    // A hung server never answers; the socket stays open until the client or close() ends it.
    if (fault === "hang") return;
    if (fault === "die") return this.die();
    const drop = fault === "drop";
    if (!body.ok) return sendError(res, body.error);
    const planned = planRequest(endpoint, body.value, req.headers, {
      servedModelName: this.cfg.servedModelName,
      maxModelLen: this.cfg.maxModelLen,
      seed: this.cfg.seed,
      sqlErrorRate: this.cfg.sqlErrorRate,
      fits: (tokens) => this.loop.fits(tokens),
    });
    if (!planned.ok) return sendError(res, planned.error);
    serveGeneration(res, planned.plan, this.loop, this.cfg.servedModelName, drop);
  }

  private logCall(req: IncomingMessage): void {
    if (this.callLog === undefined) return;
    const header = req.headers[CALL_ID_HEADER];
    const callId = (Array.isArray(header) ? header[0] : header) ?? null;
    appendFileSync(this.callLog, `${JSON.stringify({ callId, atMs: Date.now(), port: this.port })}\n`);
  }

  private async admin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const body = await readJson(req);
    if (!body.ok) return sendError(res, body.error);
    if (path === "/admin/fault") {
      const r = AdminFaultSchema.safeParse(body.value);
      if (!r.success) return sendError(res, { status: 400, message: describeIssues(r.error) });
      return sendJson(res, 200, this.faults.set(r.data));
    }
    const r = AdminHealthSchema.safeParse(body.value);
    if (!r.success) return sendError(res, { status: 400, message: describeIssues(r.error) });
    this.faults.healthy = r.data.healthy;
    return sendJson(res, 200, { healthy: this.faults.healthy });
  }

  private models(): object {
    const created = this.createdS;
    return {
      object: "list",
      data: [
        {
          id: this.cfg.servedModelName,
          object: "model",
          created,
          owned_by: "vllm",
          root: this.cfg.modelPath,
          parent: null,
          max_model_len: this.cfg.maxModelLen,
          permission: [
            {
              id: `modelperm-${created.toString(16)}`,
              object: "model_permission",
              created,
              allow_create_engine: false,
              allow_sampling: true,
              allow_logprobs: true,
              allow_search_indices: false,
              allow_view: true,
              allow_fine_tuning: false,
              organization: "*",
              group: null,
              is_blocking: false,
            },
          ],
        },
      ],
    };
  }
}

/** Starts one emulated vLLM server; resolves once it listens. */
export async function startEmulator(options: StartOptions): Promise<EmulatorHandle> {
  const cfg = resolveConfig(options);
  const s = new EmulatedServer(cfg, options.onDie, options.callLog);
  await new Promise<void>((resolve, reject) => {
    s.server.once("error", reject);
    s.server.listen(cfg.port, cfg.host, () => {
      s.server.off("error", reject);
      resolve();
    });
  });
  const address = s.server.address();
  if (address === null || typeof address === "string") throw new Error("emulator: listening on a pipe, not a TCP port");
  s.port = address.port;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  return { url: `http://${host}:${address.port}`, port: address.port, config: cfg, close: () => s.close() };
}
