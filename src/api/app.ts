import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { LIMITS } from "../core/limits";
import { admin } from "./admin";
import { tenantTraces } from "./admin-traces";
import { requireTenant } from "./auth";
import { databases } from "./databases";
import { handleError, handleNotFound } from "./errors";
import { openai } from "./openai";
import { register } from "./register";
import { metrics } from "./metrics";
import { openApiDocument } from "./openapi";
import { workflows } from "./workflows";

const { maxBodyBytes } = LIMITS.http;

/**
 * One body limit for every route. It counts the bytes of a chunked body as they arrive (no
 * Content-Length to trust), and the 413 goes through the central error handler like any other error.
 * A counted body is handed on as a new Request, which keeps the original's signal (a client going away
 * still cancels its workflow: src/api/openai.ts).
 */
const limitBody = bodyLimit({
  maxSize: maxBodyBytes,
  onError: () => {
    throw new HTTPException(413, { message: `the body may have at most ${maxBodyBytes} bytes (${maxBodyBytes / 1024 / 1024} MiB)` });
  },
});

export const app = new Hono<{ Bindings: Env }>()
  .get("/health", (c) => c.json({ ok: true }))
  .get("/openapi.json", (c) => c.json(openApiDocument()))
  .use("/v1/*", requireTenant)
  // After tenant auth, so an anonymous client cannot make the gateway buffer a body; /admin authenticates inside its own app.
  .use("*", limitBody)
  .route("/v1/workflows", workflows)
  .route("/v1/databases", databases)
  .route("/v1/traces", tenantTraces)
  .route("/v1", openai)
  .route("/admin", admin)
  .route("/register", register)
  .route("/metrics", metrics);

app.notFound(handleNotFound);
app.onError(handleError);
