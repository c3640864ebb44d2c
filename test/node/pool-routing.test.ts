import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL } from "../../src/core/gpu";
import { parsePoolRoutes, routedModels, routePool, UNROUTED, type PoolRoutes } from "../../src/core/pool-routing";

function routes(raw: string): PoolRoutes {
  const r = parsePoolRoutes(raw);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

const TWO: PoolRoutes = { routes: { [DEFAULT_MODEL]: "llama", "qwen-2.5-72b": "qwen" }, defaultPool: null };

describe("parsePoolRoutes", () => {
  it("treats an unset or blank value as no routing: everything on \"default\"", () => {
    expect(parsePoolRoutes(undefined)).toEqual({ ok: true, value: UNROUTED });
    expect(parsePoolRoutes("  ")).toEqual({ ok: true, value: UNROUTED });
    expect(UNROUTED).toEqual({ routes: {}, defaultPool: "default" });
  });

  it("reads the model=pool list and the JSON object alike, * being the default pool", () => {
    const want = { routes: { "llama-3.1-70b": "llama", "meta-llama/Llama-3.1-8B-Instruct": "small" }, defaultPool: "default" };
    expect(routes(" llama-3.1-70b = llama, meta-llama/Llama-3.1-8B-Instruct=small ,*=default")).toEqual(want);
    expect(routes('{"llama-3.1-70b":"llama","meta-llama/Llama-3.1-8B-Instruct":"small","*":"default"}')).toEqual(want);
    expect(routes("llama-3.1-70b=llama")).toEqual({ routes: { "llama-3.1-70b": "llama" }, defaultPool: null });
  });

  it.each([
    ["llama-3.1-70b", "is not model=pool"],
    ["a=b,", "is not model=pool"],
    ["a=b=c", "is not model=pool"],
    ["a=b,a=c", '"a" is listed twice'],
    ["a=Pool_A", 'entry "a": a pool name'],
    ["*=BAD", 'entry "*": a pool name'],
    ["bad model=p", 'entry "bad model": a model id'],
    ["{not json", "not valid JSON"],
    ['{"a":1}', "object of model → pool strings"],
    ["[]", "is not model=pool"],
    ["{}", "names no route"],
  ])("refuses %j, saying why", (raw, why) => {
    const r = parsePoolRoutes(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(new RegExp(`^POOL_ROUTES: .*${why.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });
});

describe("routePool", () => {
  it("lets an explicit pool win over the model's route and over a refusal", () => {
    expect(routePool(TWO, { pool: "other", model: "qwen-2.5-72b" })).toEqual({ ok: true, pool: "other", by: "explicit" });
    expect(routePool(TWO, { pool: "other", model: "unknown" })).toEqual({ ok: true, pool: "other", by: "explicit" });
  });

  it("sends a routed model to its pool", () => {
    expect(routePool(TWO, { model: "qwen-2.5-72b" })).toEqual({ ok: true, pool: "qwen", by: "model" });
    expect(routePool(TWO, { model: DEFAULT_MODEL })).toEqual({ ok: true, pool: "llama", by: "model" });
  });

  it("routes a request without a model (text2sql, replay) as one for the default model", () => {
    expect(routePool(TWO, {})).toEqual({ ok: true, pool: "llama", by: "model" });
    expect(routePool({ routes: { "qwen-2.5-72b": "qwen" }, defaultPool: "spare" }, {})).toEqual({ ok: true, pool: "spare", by: "default" });
  });

  it("sends an unrouted model to the default pool when there is one", () => {
    expect(routePool({ ...TWO, defaultPool: "spare" }, { model: "mistral-large" })).toEqual({ ok: true, pool: "spare", by: "default" });
    expect(routePool(UNROUTED, { model: "anything" })).toEqual({ ok: true, pool: "default", by: "default" });
  });

  it("refuses an unrouted model without a default pool, naming the known models", () => {
    expect(routePool(TWO, { model: "mistral-large" })).toEqual({
      ok: false,
      error: { code: "unknown_model", message: `the model "mistral-large" is not served here; known models: ${DEFAULT_MODEL}, qwen-2.5-72b` },
    });
    const r = routePool({ routes: { "qwen-2.5-72b": "qwen" }, defaultPool: null }, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toBe(`the request names no model, and the default model "${DEFAULT_MODEL}" is not served here; known models: qwen-2.5-72b`);
  });

  it("does not take an inherited property for a route", () => {
    expect(routePool(TWO, { model: "constructor" }).ok).toBe(false);
  });
});

describe("routedModels", () => {
  it("lists the routed models, sorted, without the default entry", () => {
    expect(routedModels(routes("zeta=z,alpha=a,*=d"))).toEqual(["alpha", "zeta"]);
    expect(routedModels(UNROUTED)).toEqual([]);
  });
});
