/**
 * Query results as JSON can carry them, the connector's convention for both targets: binary data as
 * PostgreSQL prints bytea (`\x` and hex). D1 returns BLOBs as arrays of byte values.
 */
const hex = (bytes: Iterable<number>) => `\\x${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;

export function jsonCell(value: unknown): unknown {
  if (value instanceof ArrayBuffer) return hex(new Uint8Array(value));
  if (ArrayBuffer.isView(value)) return hex(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  if (Array.isArray(value) && value.every((b) => typeof b === "number")) return hex(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return value;
}
