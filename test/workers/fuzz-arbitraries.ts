/**
 * fast-check arbitraries for hostile requests (test/workers/fuzz.test.ts): wrong JSON types, extreme
 * numbers, deep nesting, long and odd unicode strings, injection strings, invalid JSON text, hostile
 * path segments and headers. Each body arbitrary breaks at least one required field on purpose, so no
 * generated request is valid and none may legitimately store anything.
 */
import fc from "fast-check";

export const INJECTIONS = [
  "'; DROP TABLE tenants; --",
  "\" OR 1=1 --",
  "Robert'); DELETE FROM api_keys; --",
  "1 UNION SELECT hash FROM api_keys",
  "$(rm -rf /)",
  "`id`; cat /etc/passwd",
  "../../../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "<script>alert(1)</script>",
  "{{7*7}}${7*7}",
  "__proto__",
  "constructor",
  "%00%0d%0aSet-Cookie: x=1",
  "\u0000\u0001\u001f",
  "\u202eevil\u202c.exe",
  "مرحبا بالعالم",
  "\ud800",
  "a\udfffb",
  "𝕳𝖊𝖝𝖋𝖑𝖔𝖜 🧨👩‍👩‍👧",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
];

/** The identifier patterns of the API: pool, tenant, instance and database names, stage ids, input names. */
const NAME_PATTERNS = [/^[a-z0-9][a-z0-9_-]{0,62}$/, /^[a-z][a-z0-9_]{0,31}$/, /^[A-Za-z][A-Za-z0-9_]{0,63}$/];

/** Strings no identifier pattern of the API accepts ("constructor" or "1e309" would be fine pool names, so they are filtered out). */
export const badName: fc.Arbitrary<string> = fc
  .oneof(
    fc.constantFrom(...INJECTIONS, "", "UPPER!", "-leading", "a b", "a/b", "a.b"),
    fc.string({ unit: "binary", maxLength: 30 }).map((s) => `${s}!`),
    fc.integer({ min: 65, max: 20_000 }).map((n) => "a".repeat(n)),
  )
  .filter((s) => !NAME_PATTERNS.some((p) => p.test(s)));

/** Any string at all: names and questions that are well-typed but hostile. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...INJECTIONS),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.integer({ min: 1_000, max: 200_000 }).map((n) => "x".repeat(n)),
);

export const hugeNumber: fc.Arbitrary<number> = fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -1, 0.5, 5e-324, 2 ** 63);

/** Not a string (nor `{}`, which an all-defaults object schema would accept). Null is wrong for every optional field here; OpenAI's nullish fields use their own sets. */
export const notString: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.boolean(), hugeNumber, fc.integer(), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { minKeys: 1, maxKeys: 3 }));
export const notNumber: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.boolean(), fc.constantFrom("NaN", "Infinity", "1e309", "-0", "5", ""), fc.array(fc.integer(), { maxLength: 3 }), fc.constant({}));

/** Nested arrays or objects, up to 5,000 levels: a body or a field no schema expects that deep. */
export const deep: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(10, 100, 1_000, 5_000), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`));

/** Text that is not JSON at all, or JSON of the wrong shape for any body. */
export const garbageBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("{", "{not json", "[1,2", '{"a":1,}', "NaN", "Infinity", '{"kind":"replay"', "\u0000", "null", "true", "[]", '"text"', "1e309", "-0"),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => `{${s}`),
  deep,
);

/**
 * A JSON object whose `field` is replaced by `broken` (a JSON text, so raw tokens such as 1e309 and deep
 * nesting go in unparsed), with the other fields as in `base`.
 */
export function withBrokenField(base: Record<string, unknown>, field: string, broken: string): string {
  const marker = "\u0001BROKEN\u0001";
  return JSON.stringify({ ...base, [field]: marker }).replace(JSON.stringify(marker), broken);
}

/** `base` with one of `breakers`' fields broken (any value the arbitrary gives, or a raw deep/huge token). */
export function brokenObject(base: fc.Arbitrary<Record<string, unknown>>, breakers: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const field = fc.constantFrom(...Object.keys(breakers));
  return fc.tuple(base, field, fc.boolean(), fc.option(deep, { nil: undefined }), fc.nat()).chain(([b, f, raw, deepValue, pick]) => {
    const arb = breakers[f] ?? fc.constant(null);
    // A raw token is a number JSON.stringify would never write, or a nesting deeper than any schema.
    if (raw && deepValue !== undefined) return fc.constant(withBrokenField(b, f, pick % 2 === 0 ? deepValue : "1e309"));
    return arb.map((v) => withBrokenField(b, f, JSON.stringify(v) ?? "null"));
  });
}

/** A body for a route that takes JSON: a broken object most of the time, else not JSON or the wrong shape. */
export function invalidBody(broken: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof({ weight: 4, arbitrary: broken }, { weight: 1, arbitrary: garbageBody });
}

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD, as a browser would send it). */
export function pct(s: string): string {
  return [...new TextEncoder().encode(s)].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0").toUpperCase()}`)).join("");
}

/** A path segment: hostile text percent-encoded, or a raw traversal / malformed escape the URL parser must cope with. */
export function segment(values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: values.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom("..%2f..%2fadmin%2ftenants", "%2e%2e%2f%2e%2e%2fv1", "..%5c..%5c", "%00", "%ff%fe", "%", "%zz", ";x=1", "..;/admin", "%252e%252e%252f") },
  );
}

/** Headers a client can send (Latin-1, no control characters), from hostile text. */
export const headerValue = (s: string): string => s.replace(/[\u0000-\u001f\u007f]/g, "").replace(/[^\u0000-\u00ff]/g, "?");

/** Form and binary types are left to one deterministic test: workerd prints a warning for each such body read as text. */
export const contentType: fc.Arbitrary<string> = fc.constantFrom("application/json", "application/json", "text/plain", "application/json; charset=utf-16", "application/xml", "");

export const queryString: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom("limit", "from", "to", "pool", "format", "api_key", "__proto__"), hostileString), hostileString), { maxLength: 4 })
  .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${pct(k)}=${pct(v.slice(0, 2_000))}`).join("&")}`));

/** Authorization headers that must never authenticate anyone. */
export function hostileAuthorization(wrongCredential: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constantFrom("", "Bearer", "Bearer ", "Basic YWRtaW46YWRtaW4=", "Bearer null", "Bearer undefined", `Bearer ${"A".repeat(10_000)}`, wrongCredential),
    hostileString.map((s) => headerValue(`Bearer ${s.slice(0, 5_000)}`)),
    fc.stringMatching(/^[0-9a-f]{12}$/).map((p) => `Bearer hfk_${p}_${"x".repeat(43)}`),
  );
}
