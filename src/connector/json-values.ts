/**
 * Database values as JSON can carry them. Binary data is written the way PostgreSQL prints bytea
 * (`\x` and hex), for both backends, so clients see one convention.
 */
export function toJsonValue(value: unknown): unknown {
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}`;
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return value;
}
