/**
 * The coordinator's record of each instance's dispatch health (core/instance-health), persisted in its
 * SQLite (table `instance_health`, COORDINATOR_MIGRATIONS v4) so a restarted coordinator does not send
 * work to a server it knew was down. Evidence comes from the coordinator's probes (`probe`, run from its
 * alarm, never from a request) and from the call outcomes the instances report.
 */
import { z } from "zod";
import { dispatchRule, HEALTH_DEFAULTS, HealthConfigSchema, InstanceHealthSchema, newHealth, observeHealth, type HealthConfig, type HealthEvidence, type InstanceHealth } from "../core/instance-health";
import type { InstanceRecord } from "../core/pool";
import type { DispatchHealth } from "../core/pool-scheduler";
import type { Fetcher } from "../upstream/vllm-client";

/** load-report.ts CallOutcome, as it arrives over RPC. */
const OutcomesSchema = z.array(z.union([z.object({ callId: z.string(), ok: z.literal(true) }), z.object({ callId: z.string(), ok: z.literal(false), fault: z.string().nullable() })]));

export class HealthMonitor {
  private readonly byId = new Map<string, InstanceHealth>();
  private cfg: HealthConfig = HEALTH_DEFAULTS;

  constructor(private readonly sql: SqlStorage) {
    for (const r of sql.exec<{ instance_id: string; json: string }>("SELECT instance_id, json FROM instance_health").toArray()) {
      this.byId.set(r.instance_id, InstanceHealthSchema.parse(JSON.parse(r.json)));
    }
  }

  configure(overrides: Partial<HealthConfig> | undefined): HealthConfig {
    this.cfg = HealthConfigSchema.parse(overrides ?? {});
    return this.cfg;
  }

  get config(): HealthConfig {
    return this.cfg;
  }

  view(id: string): InstanceHealth {
    return this.byId.get(id) ?? newHealth(0);
  }

  /** Folds evidence in; answers true when the instance's status changed (dispatch must be rebuilt). */
  observe(id: string, e: HealthEvidence, nowMs: number): boolean {
    const before = this.byId.get(id) ?? newHealth(nowMs);
    const { health, changed } = observeHealth(before, e, nowMs, this.cfg);
    this.byId.set(id, health);
    // Successes on a healthy instance with clean counters change nothing worth a write (the hot path).
    const clean = health.status === "healthy" && health.probeFailures === 0 && health.callFailures === 0;
    const wasClean = before.status === "healthy" && before.probeFailures === 0 && before.callFailures === 0;
    if (changed || !(clean && wasClean)) this.save(id, health);
    return changed;
  }

  /**
   * An instance's reported call outcomes, in order: a success or a server fault is evidence, a failure that
   * is not the server's (fault null) is not. Answers the failed calls and whether the status moved.
   */
  observeCalls(id: string, outcomes: unknown, nowMs: number): { failed: Set<string>; moved: boolean } {
    const parsed = OutcomesSchema.safeParse(outcomes);
    const failed = new Set<string>();
    let moved = false;
    for (const o of parsed.success ? parsed.data : []) {
      if (!o.ok) failed.add(o.callId);
      if (!o.ok && o.fault === null) continue;
      moved = this.observe(id, o.ok ? { source: "call", ok: true } : { source: "call", ok: false, error: o.fault ?? "" }, nowMs) || moved;
    }
    return { failed, moved };
  }

  forget(id: string): void {
    this.byId.delete(id);
    this.sql.exec("DELETE FROM instance_health WHERE instance_id = ?", id);
  }

  dispatchHealth(ids: readonly string[]): DispatchHealth {
    const excluded = new Set<string>();
    const caps = new Map<string, number>();
    for (const id of ids) {
      const rule = dispatchRule(this.view(id), this.cfg);
      if (!rule.dispatchable) excluded.add(id);
      else if (rule.cap !== undefined) caps.set(id, rule.cap);
    }
    return { excluded, caps };
  }

  /** Probes every instance's `/health` at once, each through its own transport (upstream/transport.ts); answers the ids whose status changed. */
  async probe(records: readonly InstanceRecord[], fetcherFor: (r: InstanceRecord) => Fetcher, nowMs: () => number): Promise<string[]> {
    const results = await Promise.all(records.map(async (r) => ({ id: r.id, e: await probeOnce(fetcherFor(r), r.url, this.cfg.probeTimeoutMs) })));
    return results.filter(({ id, e }) => this.observe(id, e, nowMs())).map(({ id }) => id);
  }

  private save(id: string, h: InstanceHealth): void {
    this.sql.exec("INSERT OR REPLACE INTO instance_health (instance_id, json) VALUES (?, ?)", id, JSON.stringify(h));
  }
}

async function probeOnce(fetcher: Fetcher, baseUrl: string, timeoutMs: number): Promise<HealthEvidence> {
  try {
    const res = await fetcher(`${baseUrl.replace(/\/$/, "")}/health`, { method: "GET", signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok ? { source: "probe", ok: true } : { source: "probe", ok: false, error: `/health answered ${res.status}` };
  } catch (e) {
    const timeout = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    return { source: "probe", ok: false, error: timeout ? `/health gave no answer within ${timeoutMs} ms` : `/health unreachable: ${e instanceof Error ? e.message : String(e)}` };
  }
}
