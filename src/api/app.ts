import { Hono } from "hono";
import { admin } from "./admin";
import { requireTenant } from "./auth";
import { databases } from "./databases";
import { handleError, handleNotFound } from "./errors";
import { openai } from "./openai";
import { workflows } from "./workflows";

export const app = new Hono<{ Bindings: Env }>()
  .get("/health", (c) => c.json({ ok: true }))
  .use("/v1/*", requireTenant)
  .route("/v1/workflows", workflows)
  .route("/v1/databases", databases)
  .route("/v1", openai)
  .route("/admin", admin);

app.notFound(handleNotFound);
app.onError(handleError);
