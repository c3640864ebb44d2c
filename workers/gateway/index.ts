import { Hono } from "hono";
import { handleError, handleNotFound } from "../../src/api/errors";

const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true }));

app.notFound(handleNotFound);
app.onError(handleError);

export default app;
