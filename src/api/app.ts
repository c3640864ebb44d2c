import { Hono } from "hono";
import { admin } from "./admin";
import { handleError, handleNotFound } from "./errors";
import { workflows } from "./workflows";

export const app = new Hono<{ Bindings: Env }>()
  .get("/health", (c) => c.json({ ok: true }))
  .route("/v1/workflows", workflows)
  .route("/admin", admin);

app.notFound(handleNotFound);
app.onError(handleError);
