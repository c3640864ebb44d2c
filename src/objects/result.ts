/** Expected failures cross Durable Object RPC as values, never as exceptions (DESIGN section 3). */
export type ErrorCode = "invalid_request" | "not_found" | "conflict" | "no_instance" | "unavailable";

export type Result<T> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode; message: string } };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const err = <T = never>(code: ErrorCode, message: string): Result<T> => ({ ok: false, error: { code, message } });
