import { exports } from "cloudflare:workers";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it, vi } from "vitest";
import { handleError, handleNotFound } from "../../src/api/errors";

describe("gateway smoke", () => {
  it("answers GET /health with {ok:true}", async () => {
    const res = await exports.default.fetch("http://gateway.test/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("answers an unknown path with a 404 JSON error", async () => {
    const res = await exports.default.fetch("http://gateway.test/no/such/route");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body: unknown = await res.json();
    expect(body).toEqual({
      error: { code: "not_found", message: expect.any(String) },
    });
  });

  it("runs inside workerd, not Node", () => {
    // WebSocketPair is a workerd-only global; it does not exist in Node.
    expect(typeof WebSocketPair).toBe("function");
  });
});

describe("central error mapping", () => {
  const app = new Hono();
  app.get("/boom", () => {
    throw new Error("secret detail");
  });
  app.get("/teapot", () => {
    throw new HTTPException(429, { message: "slow down" });
  });
  app.notFound(handleNotFound);
  app.onError(handleError);

  it("maps an unexpected throw to 500 internal without leaking the message", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await app.request("/boom");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "internal", message: "internal error" } });
    expect(logged).toHaveBeenCalledOnce();
    logged.mockRestore();
  });

  it("keeps an HTTPException's status and message", async () => {
    const res = await app.request("/teapot");
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: { code: "rate_limited", message: "slow down" } });
  });
});
