/**
 * What test/workers/fuzz.test.ts sends to each route: hostile path params, queries, headers and bodies.
 * Every write is built to be invalid (a broken required field, garbage, or an id that does not exist),
 * so none may be accepted or store anything. `reads` marks the routes that may answer 2xx (read-only).
 */
import fc from "fast-check";
import { badName, brokenObject, garbageBody, hostileString, hugeNumber, invalidBody, notNumber, notString, queryString, segment } from "./fuzz-arbitraries";

/** A body and extra headers, drawn together so that a valid body only ever goes with a breaking header. */
export interface Payload {
  body?: string;
  headers?: Record<string, string>;
}

export interface RouteFuzz {
  params?: Record<string, fc.Arbitrary<string>>;
  payload?: fc.Arbitrary<Payload>;
  query?: fc.Arbitrary<string>;
  /** May answer 2xx: it only reads. */
  reads?: boolean;
}

const body = (b: fc.Arbitrary<string>): fc.Arbitrary<Payload> => b.map((text) => ({ body: text }));

export interface FuzzTarget {
  tenantId: string;
  keyId: string;
  /** Another tenant's key id: a real key this tenant's admin paths must not reach. */
  otherKeyId: string;
  pool: string;
  instanceId: string;
}

const nonNull = (values: unknown[]) => fc.constantFrom(...values);
/** Not a string, and not null either: OpenAI fields are nullish, so null would be valid there. */
const wrongType = nonNull([true, false, 5, 1e308, [], [1], { a: 1 }]);
/**
 * Numbers out of range for a field: -1 and 1e308 are out of every field's range; `extra` adds what else is
 * wrong for this one (0 where it must be positive, 1.5 where it must be an integer, one past its maximum).
 */
const badNumber = (extra: unknown[] = []) => fc.oneof(notNumber, nonNull([-1, 1e308, ...extra]));
const badInt = (extra: unknown[] = []) => badNumber([1.5, ...extra]);
const badPositiveInt = (extra: unknown[] = []) => badInt([0, ...extra]);
const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const anyId = segment(fc.oneof(hostileString, badName, hex(32).map((h) => `wf_${h}`), hex(16).map((h) => `key_${h}`)));
/** Extra members: every schema below is strict about them, or the field alone is invalid. */
const extra = fc.oneof(hostileString, notString);

const replay = brokenObject(fc.record({ kind: fc.constant("replay"), calls: fc.constant([{ step: "retriever", inputTokens: 10, outputTokens: 5 }]), pool: fc.constant("default") }), {
  kind: fc.oneof(notString, badName),
  calls: fc.oneof(notString, fc.constant([]), fc.array(fc.record({ step: hostileString, inputTokens: fc.oneof(fc.nat(), hugeNumber), outputTokens: badPositiveInt([100_001]) }), { minLength: 1, maxLength: 3 })),
  sloMs: badNumber([0, 86_400_001]),
  sloScale: badNumber([0, 101]),
  pool: fc.oneof(badName, notString),
  extra,
});
const text2sql = brokenObject(fc.record({ kind: fc.constant("text2sql"), database: hostileString, question: hostileString }), {
  question: fc.oneof(notString, nonNull(["", "   ", "\n\t", "q".repeat(4_001)])),
  database: fc.oneof(notString, nonNull(["", "d".repeat(64)])),
  candidates: badPositiveInt([9]),
  maxRounds: badInt([11]),
  tests: badPositiveInt([11]),
  maxRows: badPositiveInt([1_001]),
  pool: fc.oneof(badName, notString),
  extra,
});
/** Well-formed text2sql over a database no tenant has: injection strings in names and questions reach the catalog. */
const text2sqlMissing = fc.record({ kind: fc.constant("text2sql"), database: hostileString, question: hostileString, hint: fc.option(hostileString, { nil: undefined }) }).map((b) => JSON.stringify(b));
const dag = brokenObject(fc.record({ kind: fc.constant("dag"), stages: fc.constant([{ id: "a", prompt: "hi", maxTokens: 10 }]) }), {
  stages: fc.oneof(notString, fc.constant([]), fc.array(fc.record({ id: fc.constant("a"), prompt: hostileString, maxTokens: badPositiveInt([8_193]) }), { minLength: 1, maxLength: 3 })),
  sloMs: badNumber([0]),
  sloScale: badNumber([0, 101]),
  pool: fc.oneof(badName, notString),
  model: fc.oneof(notString, nonNull(["", "m".repeat(129)])),
  inputs: notString.filter((v) => typeof v !== "object" || Array.isArray(v) || v === null),
});

const chatBase = fc.record({ messages: hostileString.map((content) => [{ role: "user", content }]), max_tokens: fc.constant(4) });
const common = {
  max_tokens: nonNull([0, -1, 1.5, 8_193, 1e308, "10", true, []]),
  temperature: nonNull([-0.1, 2.5, 1e308, "1", true]),
  top_p: nonNull([0, 1.5, -1, "x"]),
  n: nonNull([2, 0, 1e308, 1.5, "1"]),
  stream: nonNull(["yes", 1, [], {}]),
  stop: nonNull(["", ["a", "b", "c", "d", "e"], [""], 5, {}]),
  seed: nonNull([1.5, "1", true]),
  model: fc.oneof(wrongType, fc.constant(""), hostileString.filter((s) => s.length > 0 && s !== "llama-3.1-70b")),
};
const chat = brokenObject(chatBase, {
  ...common,
  messages: fc.oneof(nonNull([[], "hi", 5, {}]), fc.array(fc.record({ role: fc.oneof(badName, wrongType), content: hostileString }), { minLength: 1, maxLength: 2 }), fc.array(fc.record({ role: fc.constant("user"), content: nonNull([null, 5, [], [{ type: "image", url: "x" }]]) }), { minLength: 1, maxLength: 2 })),
  tools: fc.constant([{ type: "function", function: { name: "rm" } }]),
  logprobs: fc.constant(true),
});
const completion = brokenObject(fc.record({ prompt: hostileString, max_tokens: fc.constant(4) }), {
  ...common,
  prompt: nonNull([5, null, [], ["a", "b"], [1], {}, true]),
  echo: fc.constant(true),
  suffix: fc.constant("x"),
  best_of: fc.constant(2),
});
/** A valid body under a header that breaks the request: X-SLO-Ms or X-Hexflow-Pool. */
const badOpenAiHeaders = fc.oneof(
  // No empty values: a runtime that dropped an empty header would make the request valid.
  fc.record({ "x-slo-ms": fc.oneof(fc.constantFrom("0", "-1", "1.5", "abc", "1e3", "86400001", "NaN", "Infinity", "9".repeat(400)), badName.map((s) => `${s.replace(/[^\x20-\x7e]/g, "?")}!`)) }),
  fc.record({ "x-hexflow-pool": fc.oneof(fc.constantFrom("UPPER", "../default", "default!", "a b", "-x"), fc.constant("p".repeat(64))) }),
);
/** A valid start under a malformed Idempotency-Key. Inner whitespace only: a runtime trims it at the ends. */
const badIdempotencyKey = fc.record({ "idempotency-key": fc.constantFrom("a b", "a\tb", "a\u007fb", "k".repeat(256), '"quoted key"', "x,y z") });
const validReplay = fc.constant(JSON.stringify({ kind: "replay", calls: [{ step: "retriever", inputTokens: 10, outputTokens: 5 }], pool: "default" }));
const openaiRoute = (broken: fc.Arbitrary<string>, valid: fc.Arbitrary<Record<string, unknown>>): RouteFuzz => ({
  payload: fc.oneof(
    { weight: 3, arbitrary: fc.record({ body: invalidBody(broken), headers: fc.oneof(fc.constant({}), badOpenAiHeaders) }) },
    { weight: 1, arbitrary: fc.record({ body: valid.map((b) => JSON.stringify(b)), headers: badOpenAiHeaders }) },
  ),
});

const badQuota = nonNull([{ burst: 0 }, { workflowsPerS: 0 }, { workflowsPerS: -1 }, { maxConcurrent: 1e308 }, { burst: 1.5 }, { workflowsPerS: 1e308 }, { burst: "2" }, { extra: 1 }, null, "x", []]);
const badSlo = nonNull([{ minScale: 10 }, { minScale: 0.1 }, { maxScale: 100_001 }, { defaultScale: 0 }, { defaultScale: "5" }, { x: 1 }, null, 5]);
const badConfig = fc.oneof(notString, badQuota.map((quota) => ({ quota })), badSlo.map((slo) => ({ slo })), nonNull([{ overload: "maybe" }, { unknown: 1 }]));
const badLabel = fc.oneof(notString, nonNull(["", "   ", "\t"]), fc.constant("l".repeat(65)));
const badUrl = nonNull(["file:///etc/passwd", "javascript:alert(1)", "ftp://x", "not a url", "", "http://", 5, null]);
const instanceFields = {
  url: badUrl,
  gpu: nonNull(["B200", "a100", "", 1, null]),
  maxConcurrency: badPositiveInt([1_025]),
  capacityFactor: badNumber([0, 101]),
  model: nonNull(["gpt-4", "", 5]),
};

/** Most requests name the real record, so validation is what stops them; the rest use hostile ids. */
const mostly = (real: string, hostile: fc.Arbitrary<string>) => fc.oneof({ weight: 3, arbitrary: fc.constant(real) }, { weight: 2, arbitrary: hostile });
const poolParam = (t: FuzzTarget) => mostly(t.pool, segment(badName));
const instanceParam = (t: FuzzTarget) => anyId.filter((s) => s !== t.instanceId);

export function routeFuzz(t: FuzzTarget): Record<string, RouteFuzz> {
  const tenant = mostly(t.tenantId, fc.oneof(anyId, hex(16).map((h) => `tn_${h}`)));
  return {
    "GET /health": { reads: true },
    "GET /openapi.json": { reads: true },
    "POST /v1/workflows": {
      payload: fc.oneof(
        { weight: 4, arbitrary: body(invalidBody(fc.oneof(replay, text2sql, dag))) },
        { weight: 1, arbitrary: body(text2sqlMissing) },
        { weight: 1, arbitrary: fc.record({ body: validReplay, headers: badIdempotencyKey }) },
      ),
    },
    "GET /v1/workflows/:id": { params: { id: anyId }, reads: true },
    "DELETE /v1/workflows/:id": { params: { id: anyId } },
    "POST /v1/databases": {
      payload: body(invalidBody(
        brokenObject(fc.constant({ name: "db-ok", target: { kind: "d1", binding: "DEMO_DB" }, ddl: "CREATE TABLE t (id INTEGER)" }), {
          name: fc.oneof(badName, notString),
          target: fc.oneof(notString, nonNull([{ kind: "d1", binding: "TRACES" }, { kind: "d1", binding: "demo_db" }, { kind: "d1", binding: "'; DROP" }, { kind: "connector", url: "file:///etc/passwd", token: "t".repeat(20) }, { kind: "connector", url: "javascript:alert(1)", token: "t".repeat(20) }, { kind: "connector", url: "http://127.0.0.1:1", token: "short" }, { kind: "sql" }, {}])),
          dialect: fc.oneof(notString, nonNull(["oracle", "SQLITE", ""])),
          ddl: notString,
          extra,
        }),
      )),
    },
    "GET /v1/models": { reads: true },
    "GET /v1/databases": { reads: true },
    "GET /v1/databases/:name": { params: { name: segment(fc.oneof(hostileString, badName)) }, reads: true },
    "DELETE /v1/databases/:name": { params: { name: segment(fc.oneof(hostileString, badName)) } },
    "POST /v1/chat/completions": openaiRoute(chat, chatBase),
    "POST /v1/completions": openaiRoute(completion, fc.record({ prompt: hostileString, max_tokens: fc.constant(4) })),
    "GET /admin/traces": {
      query: fc.oneof(queryString, fc.record({ from: hostileString, to: fc.oneof(hostileString, fc.constant("0")), limit: nonNull(["0", "-1", "1e308", "50001", "abc"]) }).map((q) => `?from=${encodeURIComponent(q.from.replace(/[\ud800-\udfff]/g, ""))}&to=${q.to === "0" ? "0" : "1"}&limit=${q.limit}`)),
      reads: true,
    },
    "POST /admin/tenants": { payload: body(invalidBody(brokenObject(fc.constant({ name: "fz-new" }), { name: fc.oneof(badName, notString), config: badConfig, extra }))) },
    "GET /admin/tenants": { reads: true },
    "GET /admin/tenants/:tenant": { params: { tenant }, reads: true },
    "PATCH /admin/tenants/:tenant": { params: { tenant }, payload: body(invalidBody(brokenObject(fc.constant({}), { quota: badQuota, slo: badSlo, overload: fc.oneof(notString, nonNull(["maybe", "REJECT", ""])), extra }))) },
    "GET /admin/tenants/:tenant/keys": { params: { tenant }, reads: true },
    "POST /admin/tenants/:tenant/keys": { params: { tenant }, payload: body(invalidBody(brokenObject(fc.constant({}), { label: badLabel, extra }))) },
    "POST /admin/tenants/:tenant/keys/:key/rotate": {
      params: { tenant, key: mostly(t.keyId, fc.oneof(fc.constant(t.otherKeyId), anyId)) },
      payload: body(invalidBody(brokenObject(fc.constant({}), { graceS: badInt([604_801]), label: badLabel, extra }))),
    },
    // Never the tenant's own key id: with it, a DELETE is a valid revocation.
    "DELETE /admin/tenants/:tenant/keys/:key": { params: { tenant, key: fc.oneof(fc.constant(t.otherKeyId), anyId.filter((s) => s !== t.keyId)) } },
    "GET /admin/pools/:pool/tuning": { params: { pool: poolParam(t) }, query: fc.constantFrom("?limit=0", "?limit=501", "?limit=1e308", "?limit=-1", "?limit=abc", "?limit=%00"), reads: true },
    // Only invalid pool filters: a valid scrape answers Prometheus text, not JSON (test/workers/metrics.test.ts checks it).
    "GET /metrics": { query: fc.constantFrom("?pool=", "?pool=BAD!", "?pool=%00", "?pool=a&pool=..", "?pool=-x", `?pool=${"a".repeat(64)}`) },
    "GET /admin/pools/:pool/dashboard": {
      params: { pool: poolParam(t) },
      query: fc.constantFrom("?windowS=59", "?windowS=86401", "?stepS=0", "?spanS=abc", "?recent=51", "?decisions=-1", "?windowS=1e308", "?bogus=1", "?recent=%00"),
      reads: true,
    },
    // Only invalid pool names: for a valid one the tuner Worker answers, and in this project it is down (503).
    "POST /admin/pools/:pool/tune": { params: { pool: segment(badName) } },
    "GET /admin/pools/:pool": { params: { pool: segment(fc.oneof(badName, hostileString)) }, reads: true },
    "POST /admin/pools/:pool/instances": {
      params: { pool: poolParam(t) },
      payload: body(invalidBody(brokenObject(fc.constant({ id: "fz-inst", url: "http://127.0.0.1:9009", gpu: "A100", timeScale: 20 }), { ...instanceFields, id: fc.oneof(badName, notString), timeScale: badNumber([0, 10_001]) }))),
    },
    "PATCH /admin/pools/:pool/instances/:id": {
      params: { pool: poolParam(t), id: mostly(t.instanceId, instanceParam(t)) },
      payload: body(invalidBody(brokenObject(fc.constant({}), { ...instanceFields, id: fc.constant("renamed"), timeScale: fc.constant(20), extra }))),
    },
    "POST /admin/pools/:pool/instances/:id/drain": { params: { pool: poolParam(t), id: instanceParam(t) } },
    "POST /admin/pools/:pool/instances/:id/activate": { params: { pool: poolParam(t), id: instanceParam(t) } },
    "DELETE /admin/pools/:pool/instances/:id": { params: { pool: poolParam(t), id: instanceParam(t) } },
    "GET /admin/pools/:pool/instances/:id/queue": { params: { pool: poolParam(t), id: instanceParam(t) }, reads: true },
    "POST /admin/pools/:pool/registration-tokens": { params: { pool: poolParam(t) }, payload: body(invalidBody(brokenObject(fc.constant({}), { label: badLabel, ttlS: badInt([0, 59, 31_536_001]), extra }))) },
    "GET /admin/pools/:pool/registration-tokens": { params: { pool: poolParam(t) }, reads: true },
    "DELETE /admin/pools/:pool/registration-tokens/:token": { params: { pool: poolParam(t), token: segment(fc.oneof(hostileString, hex(16).map((h) => `rt_${h}`))) } },
    // Sent with the pool's registration token: every body is invalid, so none registers anything.
    "PUT /register/pools/:pool/instances/:id": {
      params: { pool: poolParam(t), id: fc.oneof(fc.constant("fz-host"), instanceParam(t)) },
      payload: body(invalidBody(brokenObject(fc.constant({ url: "http://127.0.0.1:9009", gpu: "A100", timeScale: 20 }), { ...instanceFields, timeScale: badNumber([0, 10_001]), kvTokens: badPositiveInt(), extra }))),
    },
    "PUT /admin/pools/:pool/policy": {
      params: { pool: poolParam(t) },
      payload: body(invalidBody(brokenObject(fc.constant({}), { policy: fc.oneof(hostileString, notString), alpha: badNumber([-0.1, 1.1]), pinned: nonNull(["yes", 1, null]), calibration: nonNull(["x", 1]), admission: nonNull(["maybe", 1]), extra }))),
    },
  };
}

/** For a route this file does not know yet: only garbage, so it cannot be a valid write. */
export const unknownRoute: RouteFuzz = { payload: body(garbageBody) };
