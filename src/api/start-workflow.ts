/**
 * The one way a tenant's workflow starts, for every kind (replay, DAG, Text-to-SQL, one OpenAI-style call):
 * its SLO within the tenant's class, the tenant's quota, the pool's admission control, then the
 * WorkflowObject. Each refusal undoes what the steps before it took, so a refused request leaves nothing.
 */
import type { Context } from "hono";
import { resolveSlo, type SloAsk } from "../core/tenant";
import type { TenantEnv } from "./auth";
import type { StartInput } from "../objects/workflow";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { statusFor } from "./results";

/** How the route spells an error (the native `{error:{code,message}}`, or OpenAI's shape). */
export type Fail = (status: ContentfulStatusCode, code: string, message: string) => Response;

export interface StartRequest {
  id: string;
  pool: string;
  /** The pool clock's now and the base SLO of what is asked (pool-clock seconds). */
  nowS: number;
  baseS: number;
  ask: SloAsk;
  what: Pick<StartInput, "spec" | "dag" | "text2sql">;
}

export type Started = { ok: true; id: string; status: string; sloS: number; bestEffort: boolean } | { ok: false; response: Response };

export async function startForTenant(c: Context<TenantEnv>, r: StartRequest, fail: Fail): Promise<Started> {
  const tenant = c.get("tenant");
  const slo = resolveSlo(tenant.config.slo, r.ask, r.baseS);
  if (!slo.ok) return { ok: false, response: fail(400, "slo_out_of_range", slo.message) };

  const quotaStub = c.env.TENANT.getByName(tenant.id);
  const quota = await quotaStub.acquire(r.id, tenant.config.quota);
  if (!quota.ok) {
    c.header("retry-after", String(quota.retryAfterS));
    return { ok: false, response: fail(429, "rate_limited", quota.message) };
  }

  const coordinator = c.env.COORDINATOR.getByName(r.pool);
  const admission = await coordinator.admit({ workflowId: r.id, spec: r.what.spec, sloS: slo.sloS, bestEffortAllowed: tenant.config.overload === "best-effort" });
  if (admission.decision === "reject") {
    await quotaStub.release(r.id, tenant.config.quota);
    // No Retry-After when waiting cannot help (even an idle pool is too slow for this SLO).
    if (admission.retryAfterS !== null) c.header("retry-after", String(admission.retryAfterS));
    const why = admission.retryAfterS === null ? "even an idle pool could not meet it; ask a looser SLO" : "retry later or with a looser SLO";
    return { ok: false, response: fail(503, "overloaded", `the pool predicts this workflow would take ${Math.round(admission.predictedS)} s against its SLO of ${Math.round(slo.sloS)} s; ${why}`) };
  }

  // A best-effort workflow is scheduled with the looser SLO the pool gave it, and reported against its own.
  const bestEffort = admission.decision === "best-effort";
  const started = await c.env.WORKFLOW.getByName(r.id).start({ id: r.id, sloS: admission.sloS, requestedSloS: slo.sloS, arrivalS: r.nowS, pool: r.pool, tenant: tenant.id, bestEffort, ...r.what });
  if (!started.ok) {
    // Nothing runs: the slot, the token and the pool's reservation go back.
    await Promise.all([quotaStub.release(r.id, tenant.config.quota), coordinator.workflowEnded(r.id, null)]);
    return { ok: false, response: fail(statusFor(started.error.code), started.error.code, started.error.message) };
  }
  return { ok: true, id: r.id, status: started.value.status, sloS: slo.sloS, bestEffort };
}
