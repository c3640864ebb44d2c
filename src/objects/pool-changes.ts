/**
 * The coordinator's admin changes, checked and applied to its settings and registry without the Durable
 * Object: a registration, a policy update, the tuner's α. Each answers the new settings (or record), or an
 * expected failure as a value; the object persists it and rebuilds what depends on it.
 */
import { z } from "zod";
import { getPolicy, POLICY_NAMES } from "../core/policies";
import { InstanceRegistrationSchema, toRecord, type InstanceRecord } from "../core/pool";
import { err, ok, type Result } from "./result";
import { PolicyUpdateSchema, type Settings } from "./pool-settings";

/** A new instance for a pool: refused when its id is taken or its time scale is not the pool's. */
export function newInstance(input: unknown, records: readonly InstanceRecord[], s: Settings, nowMs: number): Result<InstanceRecord> {
  const parsed = InstanceRegistrationSchema.safeParse(input);
  if (!parsed.success) return err("invalid_request", z.prettifyError(parsed.error));
  if (records.some((r) => r.id === parsed.data.id)) return err("conflict", `instance ${parsed.data.id} is already registered`);
  if (s.timeScale !== null && records.length > 0 && s.timeScale !== parsed.data.timeScale) {
    return err("conflict", `the pool runs at time scale ${s.timeScale}; instance has ${parsed.data.timeScale}`);
  }
  return ok(toRecord(parsed.data, nowMs));
}

/** `PUT /admin/pools/:pool/policy`: the settings after the update (α's version moves on every update). */
export function updatedPolicy(input: unknown, s: Settings): Result<Settings> {
  const parsed = PolicyUpdateSchema.safeParse(input);
  if (!parsed.success) return err("invalid_request", z.prettifyError(parsed.error));
  const u = parsed.data;
  const policy = u.policy ?? s.policy;
  if (getPolicy(policy) === undefined) return err("invalid_request", `unknown policy "${policy}" (known: ${POLICY_NAMES.join(", ")})`);
  const health = u.health === undefined ? s.health : { ...s.health, ...u.health };
  return ok({ ...s, policy, alpha: u.alpha ?? s.alpha, alphaVersion: s.alphaVersion + 1, pinned: u.pinned ?? s.pinned, calibration: u.calibration ?? s.calibration, admission: u.admission ?? s.admission, ...(health === undefined ? {} : { health }) });
}

/**
 * The tuner's install: refused when α is pinned, or when α changed since the tuner read it (its
 * simulation compared against an α that is no longer current).
 */
export function installedAlpha(alpha: number, basedOnVersion: number, s: Settings): Result<Settings> {
  if (!Number.isFinite(alpha) || alpha < 0 || alpha > 1) return err("invalid_request", `α must be in [0, 1], got ${alpha}`);
  if (s.pinned) return err("conflict", "α is pinned for this pool: automatic tuning is off");
  if (s.alphaVersion !== basedOnVersion) return err("conflict", `α changed meanwhile (version ${s.alphaVersion}, tuned against ${basedOnVersion})`);
  return ok({ ...s, alpha, alphaVersion: s.alphaVersion + 1 });
}
