/**
 * The OpenAPI document: served publicly at /openapi.json, OpenAPI 3.1 in shape, generated from the zod
 * schemas, and covering every route the Hono app registers, so a route added without documentation fails here.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { app } from "../../src/api/app";
import { openApiDocument } from "../../src/api/openapi";
import { LIMITS } from "../../src/core/limits";
import { api } from "./helpers";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

const OperationSchema = z.object({
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  responses: z.record(z.string(), z.object({ headers: z.record(z.string(), z.unknown()).optional() }).loose()),
}).loose();
const DocumentSchema = z.object({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.partialRecord(z.enum(METHODS), OperationSchema)),
  components: z.object({
    schemas: z.record(z.string(), z.record(z.string(), z.unknown())),
    securitySchemes: z.record(z.string(), z.object({ type: z.string(), scheme: z.string().optional() })),
  }),
});
type Doc = z.infer<typeof DocumentSchema>;

async function document(): Promise<Doc> {
  const res = await api("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  return DocumentSchema.parse(await res.json());
}

/** The app's routes as OpenAPI spells them; "ALL" entries are middleware (auth, body limit). */
function appRoutes(): { method: string; path: string }[] {
  const routes = app.routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method.toLowerCase(), path: r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}") }));
  return [...new Map(routes.map((r) => [`${r.method} ${r.path}`, r])).values()];
}

function schemaAt(doc: Doc, ref: unknown): Record<string, unknown> {
  const name = z.object({ $ref: z.string() }).parse(ref).$ref.replace("#/components/schemas/", "");
  const s = doc.components.schemas[name];
  if (s === undefined) throw new Error(`no schema ${name}`);
  return s;
}

describe("GET /openapi.json", () => {
  it("is public and an OpenAPI 3.1 document with both security schemes", async () => {
    const doc = await document();
    expect(doc.components.securitySchemes.tenantKey).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(doc.components.securitySchemes.adminToken).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(doc.components.schemas.ErrorBody).toBeDefined();
  });

  it("documents every route the app registers, with the right credential", async () => {
    const doc = await document();
    const routes = appRoutes();
    expect(routes.length).toBeGreaterThan(20);
    const missing = routes.filter((r) => doc.paths[r.path]?.[r.method as (typeof METHODS)[number]] === undefined);
    expect(missing).toEqual([]);
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method as (typeof METHODS)[number]];
      const expected = r.path.startsWith("/v1/") ? [{ tenantKey: [] }] : r.path.startsWith("/admin/") || r.path === "/metrics" ? [{ adminToken: [] }] : r.path.startsWith("/register/") ? [{ registrationToken: [] }] : [];
      expect(op?.security, `${r.method} ${r.path}`).toEqual(expected);
      if (expected.length > 0) expect(Object.keys(op?.responses ?? {}), `${r.method} ${r.path}`).toContain("401");
    }
  });

  it("documents nothing the app does not serve", async () => {
    const doc = await document();
    const served = new Set(appRoutes().map((r) => `${r.method} ${r.path}`));
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`));
    expect(documented.filter((d) => !served.has(d))).toEqual([]);
  });

  it("takes its schemas from zod: the workflow kinds, the question's limit, Retry-After on 429 and 503", async () => {
    const doc = await document();
    const start = doc.paths["/v1/workflows"]?.post;
    const body = z.object({ requestBody: z.object({ content: z.object({ "application/json": z.object({ schema: z.unknown() }) }) }) }).parse(start);
    const request = schemaAt(doc, body.requestBody.content["application/json"].schema);
    const Variants = z.object({ oneOf: z.array(z.unknown()), discriminator: z.object({ propertyName: z.literal("kind"), mapping: z.record(z.string(), z.string()) }) });
    const variants = Variants.parse(request);
    expect(Object.keys(variants.discriminator.mapping).sort()).toEqual(["dag", "replay", "text2sql"]);
    const Props = z.object({ properties: z.record(z.string(), z.record(z.string(), z.unknown())) });
    const kinds = variants.oneOf.map((v) => Props.parse(schemaAt(doc, v)).properties.kind);
    expect(kinds.map((k) => k?.const ?? (Array.isArray(k?.enum) ? k.enum[0] : undefined)).sort()).toEqual(["dag", "replay", "text2sql"]);

    const text2sql = Props.parse(doc.components.schemas.Text2SqlWorkflow);
    expect(text2sql.properties.question?.maxLength).toBe(LIMITS.text2sql.maxQuestionChars);
    expect(text2sql.properties.maxRows?.maximum).toBe(LIMITS.text2sql.maxRows.max);
    const dag = Props.parse(doc.components.schemas.DagWorkflow);
    expect(dag.properties.stages?.maxItems).toBe(LIMITS.dag.maxStages);

    for (const status of ["429", "503"]) expect(Object.keys(start?.responses[status]?.headers ?? {})).toContain("Retry-After");
    expect(Object.keys(start?.responses ?? {})).toEqual(expect.arrayContaining(["202", "400", "401", "404", "413", "429", "503"]));
    const chat = doc.paths["/v1/chat/completions"]?.post;
    expect(Object.keys(chat?.responses["429"]?.headers ?? {})).toContain("Retry-After");
  });

  it("is built once per isolate", () => {
    expect(openApiDocument()).toBe(openApiDocument());
  });
});
