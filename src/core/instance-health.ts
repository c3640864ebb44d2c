/**
 * Whether an instance may be dispatched to: a small state machine over two kinds of evidence, the
 * coordinator's periodic probe of vLLM's `/health` and the outcomes of the calls its GpuInstanceObject
 * forwards (a refused connection, a 5xx, a timeout, a stream cut short).
 *
 * Why both: a dead host fails the probe within seconds even when no call is running there; a server
 * whose listener is up but whose engine hangs or errors answers the probe and fails the calls. The
 * counters are kept apart for that reason: a probe that passes does not excuse calls that keep failing.
 *
 * healthy → unhealthy after `unhealthyAfter` consecutive failures of either kind; unhealthy → probation
 * on the first success (a probe, or a call that was still running); probation → healthy after
 * `probationSuccesses` consecutive successes, and back to unhealthy on any failure. In probation the
 * dispatcher sends the instance at most `probationMaxOutstanding` calls, so a server that comes back
 * half-working costs a few calls rather than a stage's worth.
 *
 * Trade-off: one slow probe is not a failure (the timeout is generous) and one failed call is not
 * either, so a real outage costs up to `unhealthyAfter` failed calls (each retried elsewhere) or
 * `unhealthyAfter` probe periods before dispatch stops.
 */
import { z } from "zod";

export const HealthStatusSchema = z.enum(["healthy", "probation", "unhealthy"]);
export type HealthStatus = z.infer<typeof HealthStatusSchema>;

export const InstanceHealthSchema = z.object({
  status: HealthStatusSchema,
  probeFailures: z.number().int().nonnegative(),
  callFailures: z.number().int().nonnegative(),
  /** Consecutive successes in probation. */
  successes: z.number().int().nonnegative(),
  /** Real milliseconds: when the status last changed. */
  sinceMs: z.number(),
  lastError: z.string().nullable(),
  lastProbeMs: z.number().nullable(),
});
export type InstanceHealth = z.infer<typeof InstanceHealthSchema>;

export const HealthConfigSchema = z.object({
  unhealthyAfter: z.number().int().min(1).max(100).default(3),
  probationSuccesses: z.number().int().min(1).max(1000).default(5),
  probationMaxOutstanding: z.number().int().min(1).max(1024).default(2),
  /** Real milliseconds between probes of every instance. */
  probeIntervalMs: z.number().int().min(100).max(600_000).default(2_000),
  probeTimeoutMs: z.number().int().min(50).max(60_000).default(1_500),
});
export type HealthConfig = z.infer<typeof HealthConfigSchema>;
export const HEALTH_DEFAULTS: HealthConfig = HealthConfigSchema.parse({});

export function newHealth(nowMs: number): InstanceHealth {
  return { status: "healthy", probeFailures: 0, callFailures: 0, successes: 0, sinceMs: nowMs, lastError: null, lastProbeMs: null };
}

export type HealthEvidence = { source: "probe" | "call"; ok: true } | { source: "probe" | "call"; ok: false; error: string };

/** The next state after one piece of evidence; `changed` when the status moved. */
export function observeHealth(h: InstanceHealth, e: HealthEvidence, nowMs: number, cfg: HealthConfig = HEALTH_DEFAULTS): { health: InstanceHealth; changed: boolean } {
  const lastProbeMs = e.source === "probe" ? nowMs : h.lastProbeMs;
  const to = (status: HealthStatus, rest: Partial<InstanceHealth>): { health: InstanceHealth; changed: boolean } => {
    const changed = status !== h.status;
    return { health: { ...h, ...rest, status, lastProbeMs, sinceMs: changed ? nowMs : h.sinceMs }, changed };
  };
  if (e.ok) {
    const counters = e.source === "probe" ? { probeFailures: 0 } : { callFailures: 0 };
    if (h.status === "unhealthy") return to("probation", { ...counters, successes: 1 });
    if (h.status === "probation") {
      const successes = h.successes + 1;
      return successes >= cfg.probationSuccesses ? to("healthy", { probeFailures: 0, callFailures: 0, successes: 0 }) : to("probation", { ...counters, successes });
    }
    return to("healthy", counters);
  }
  const probeFailures = h.probeFailures + (e.source === "probe" ? 1 : 0);
  const callFailures = h.callFailures + (e.source === "call" ? 1 : 0);
  const rest = { probeFailures, callFailures, successes: 0, lastError: `${e.source}: ${e.error}` };
  if (h.status === "probation") return to("unhealthy", rest);
  if (h.status === "healthy" && Math.max(probeFailures, callFailures) >= cfg.unhealthyAfter) return to("unhealthy", rest);
  return to(h.status, rest);
}

/** Dispatch may use the instance; `cap` bounds its outstanding calls (probation) when not undefined. */
export function dispatchRule(h: InstanceHealth, cfg: HealthConfig = HEALTH_DEFAULTS): { dispatchable: boolean; cap: number | undefined } {
  if (h.status === "unhealthy") return { dispatchable: false, cap: undefined };
  return { dispatchable: true, cap: h.status === "probation" ? cfg.probationMaxOutstanding : undefined };
}
