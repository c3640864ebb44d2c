/**
 * Which failed calls go back to their workflow for another instance, and how often.
 *
 * Why: an on-prem server dies, a tunnel drops, an object restarts mid-forward; none of that is the
 * call's fault, and the workflow has a deadline to keep rather than a reason to fail. A request the
 * server refuses as such (4xx: context too long, a bad parameter) fails the same way everywhere, so
 * it ends the workflow with that reason at once.
 *
 * Trade-off: a retried call may have run to the end on the server whose answer was lost (vLLM aborts
 * a request whose client went away, but not one that had already finished). The bound caps that
 * waste: a call executes at most MAX_CALL_ATTEMPTS times.
 */

/** Executions of one call, the first included; the chaos harness checks the emulators' logs against it. */
export const MAX_CALL_ATTEMPTS = 3;

/** Re-dispatches of a call that never reached a server (its instance drained or turned unhealthy first). */
export const MAX_CALL_EVACUATIONS = 10;

export type CallFailureKind = "retry" | "evacuated" | "fatal";

export interface CallError {
  code: string;
  status?: number;
  message: string;
}

/**
 * "evacuated": never executed, goes elsewhere without counting as an attempt; "retry": may have executed,
 * counts; "fatal": the request itself is wrong (a 4xx other than 408 and 429) or unknown.
 */
export function classifyFailure(e: CallError): CallFailureKind {
  switch (e.code) {
    case "evacuated":
      return "evacuated";
    case "upstream_unreachable":
    case "upstream_timeout":
    case "upstream_bad_response":
    case "instance_restarted":
    case "call_lost":
      return "retry";
    case "upstream_error":
      if (e.status === undefined || e.status >= 500 || e.status === 408 || e.status === 429) return "retry";
      return "fatal";
    default:
      return "fatal";
  }
}
