/**
 * Fault injection for the generation endpoints: per request (`x-hexflow-fault: 500|503|hang|die|drop`)
 * or for the next n requests (`POST /admin/fault`). Health is separate (`POST /admin/health`), as on
 * a real server whose engine died: /health turns 503 while the listener stays up.
 */
import { badRequest, type ApiError } from "./errors";
import type { AdminFault } from "./openai-shapes";

/** "drop": the response starts (200, the first part of the stream) and then the connection is cut, with no end. */
export type Fault = "error500" | "error503" | "hang" | "die" | "drop";

export const FAULT_HEADER = "x-hexflow-fault";

const HEADER_VALUES: Record<string, Fault> = { "500": "error500", "503": "error503", hang: "hang", die: "die", drop: "drop" };

export class FaultState {
  private mode: AdminFault["mode"] = "none";
  /** Requests the admin mode still applies to; undefined: every request. */
  private remaining: number | undefined;
  healthy = true;

  set(fault: AdminFault): { mode: AdminFault["mode"]; remaining: number | null } {
    this.mode = fault.mode;
    this.remaining = fault.mode === "none" ? undefined : fault.count;
    return this.describe();
  }

  describe(): { mode: AdminFault["mode"]; remaining: number | null } {
    return { mode: this.mode, remaining: this.remaining ?? null };
  }

  /** The fault this request meets, if any. A header names its own and leaves the admin count alone. */
  take(header: string | string[] | undefined): Fault | undefined | ApiError {
    if (header !== undefined) {
      const value = Array.isArray(header) ? header[0] : header;
      const fault = value === undefined ? undefined : HEADER_VALUES[value.trim().toLowerCase()];
      if (fault === undefined) return badRequest(`${FAULT_HEADER} must be one of 500, 503, hang, die, drop (got "${String(value)}")`);
      return fault;
    }
    if (this.mode === "none") return undefined;
    const fault = this.mode;
    if (this.remaining !== undefined) {
      this.remaining -= 1;
      if (this.remaining <= 0) this.set({ mode: "none" });
    }
    return fault;
  }
}

export function faultError(fault: "error500" | "error503"): ApiError {
  return fault === "error500"
    ? { status: 500, message: "Internal server error (fault injected by the hexflow emulator)." }
    : { status: 503, message: "Service unavailable (fault injected by the hexflow emulator)." };
}
