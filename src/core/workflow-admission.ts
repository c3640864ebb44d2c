/**
 * Pool-level admission of whole workflows (the coordinator's, not an instance's: see ./admission).
 *
 * Why: past the pool's capacity every workflow misses its SLO, because a deadline-ordered queue can
 * only reorder work, not make it smaller. Refusing the workflows that cannot make it keeps the
 * admitted ones on time, and a refusal at arrival (503 + Retry-After) is cheaper for the client than
 * a result that comes too late.
 * Inputs: the work committed to the pool per admitted workflow (its released, unfinished calls'
 * estimated seconds t̂ plus the t̄ of its expected remaining stages, the budget's own machinery), the
 * new workflow's expected work and critical path, and the pool's service rate μ in estimated seconds
 * per second: per instance, finished calls' t̂ over the time it had calls queued (so it was saturated),
 * blended with a prior of `priorParallelism` × capacityFactor (vLLM batches, so μ is well above 1).
 * The prediction is a fluid EDF schedule: a workflow finishes after the work of every admitted
 * workflow with an earlier deadline (all of it, under a FIFO queue) and its own, at rate μ, and not
 * before its critical path. Admit iff max(critical path, headroom × that backlog time) ≤ SLO and no
 * admitted workflow with a later deadline that was predicted on time becomes late by it.
 * Trade-offs: the fluid model ignores that chains cannot use the whole pool and that estimates err;
 * `headroom` pays for that with rejections (higher rejects more and keeps attainment higher).
 * Unfinished calls count at their full t̂ (no progress within a call), unreleased stages at the pool
 * average t̄ (dispatch prefers fast GPUs, so this errs high). Best-effort workflows get a deadline far
 * behind every guaranteed one, so a deadline-ordered queue serves them from idle capacity; under a
 * FIFO queue they compete, and so they count as committed work there. State is plain data
 * (snapshot/restore); a coordinator that restarts without a snapshot underestimates the committed
 * work until the workflows in flight end, and the rate falls back to its prior.
 */
import { z } from "zod";
import { STEP } from "./chess";
import type { PlanState } from "./remaining";

export const WorkflowAdmissionConfigSchema = z.object({
  /** Multiplies the predicted backlog time before it is compared with the SLO. */
  headroom: z.number().min(1).default(1.3),
  /** "deadline" for least-laxity / EDF queues, "arrival" for FIFO ones. */
  queueOrder: z.enum(["deadline", "arrival"]).default("deadline"),
  /** μ per instance (× its capacityFactor) before measurement; err high, a low prior rejects without evidence. */
  priorParallelism: z.number().positive().default(16),
  /** Weight of the prior, as seconds of saturated observation. */
  priorWeightS: z.number().nonnegative().default(60),
  /** Old observations fade with this half-life, so μ follows a changing call mix. */
  halfLifeS: z.number().positive().default(900),
  /** A best-effort workflow is scheduled with this many SLOs, and behind every guaranteed deadline. */
  bestEffortSloFactor: z.number().min(1).default(100),
  /** Expected calls per template stage (fan-outs count once in the template). CHESS trace means. */
  fanOut: z.record(z.string(), z.number().positive()).default({ [STEP.candidate]: 2, [STEP.evaluate]: 5.13 }),
});
export type WorkflowAdmissionConfig = z.infer<typeof WorkflowAdmissionConfigSchema>;

const WorkflowEntrySchema = z.object({ deadlineS: z.number(), bestEffort: z.boolean(), unreleasedS: z.number(), releasedS: z.number() });
const CallEntrySchema = z.object({ workflowId: z.string(), instanceId: z.string(), estimateS: z.number() });
const RateEntrySchema = z.object({ workS: z.number(), timeS: z.number(), lastAtS: z.number().nullable(), backlogged: z.boolean() });
export const WorkflowAdmissionSnapshotSchema = z.object({
  workflows: z.record(z.string(), WorkflowEntrySchema),
  calls: z.record(z.string(), CallEntrySchema),
  rates: z.record(z.string(), RateEntrySchema),
});
export type WorkflowAdmissionSnapshot = z.infer<typeof WorkflowAdmissionSnapshotSchema>;
type WorkflowEntry = z.infer<typeof WorkflowEntrySchema>;
type RateEntry = z.infer<typeof RateEntrySchema>;

/** A new workflow as the predictor sees it (see expectedWork). */
export interface AdmissionRequest {
  sloS: number;
  workS: number;
  criticalPathS: number;
  /** The tenant accepts best-effort service instead of a refusal. */
  bestEffortAllowed: boolean;
}

/** `sloS` is what to schedule the workflow with (its own, or the looser best-effort one). */
export type AdmissionDecision =
  | { admit: true; bestEffort: false; predictedS: number; sloS: number }
  | { admit: true; bestEffort: true; predictedS: number; sloS: number; retryAfterS: number | null }
  | { admit: false; bestEffort: false; predictedS: number; retryAfterS: number | null };

export interface ReleasedWork {
  callId: string;
  instanceId: string;
  estimateS: number;
}

/** A workflow's expected work (fan-outs × their calls) and critical path (fan-outs once), from t̄. */
export function expectedWork(steps: readonly string[], meanStepTime: (step: string) => number, fanOut: Readonly<Record<string, number>>): { workS: number; criticalPathS: number } {
  let workS = 0;
  let criticalPathS = 0;
  for (const s of steps) {
    const t = meanStepTime(s);
    criticalPathS += t;
    workS += t * (fanOut[s] ?? 1);
  }
  return { workS, criticalPathS };
}

/** The stages a plan still expects after its last release (parity's shared list is not in the plan: the whole template, erring high). */
export function remainingSteps(plan: PlanState): readonly string[] {
  return plan.own ?? plan.template.slice(plan.cursor);
}

export class WorkflowAdmission {
  readonly config: WorkflowAdmissionConfig;
  private instances: { id: string; capacityFactor: number }[];
  private readonly workflows = new Map<string, WorkflowEntry>();
  private readonly calls = new Map<string, z.infer<typeof CallEntrySchema>>();
  private readonly rates = new Map<string, RateEntry>();

  constructor(config: z.input<typeof WorkflowAdmissionConfigSchema>, instances: readonly { id: string; capacityFactor: number }[], snapshot?: WorkflowAdmissionSnapshot) {
    this.config = WorkflowAdmissionConfigSchema.parse(config);
    this.instances = [...instances];
    if (snapshot === undefined) return;
    for (const [k, v] of Object.entries(snapshot.workflows)) this.workflows.set(k, { ...v });
    for (const [k, v] of Object.entries(snapshot.calls)) this.calls.set(k, { ...v });
    for (const [k, v] of Object.entries(snapshot.rates)) this.rates.set(k, { ...v });
  }

  /** The instances that serve new work (the registry changed). Measured rates of others are kept. */
  setInstances(instances: readonly { id: string; capacityFactor: number }[]): void {
    this.instances = [...instances];
  }

  /** μ: estimated seconds of work the pool finishes per second when saturated. */
  get rateS(): number {
    let mu = 0;
    for (const inst of this.instances) {
      const r = this.rates.get(inst.id);
      const prior = this.config.priorParallelism * inst.capacityFactor;
      const w = this.config.priorWeightS;
      mu += r === undefined || r.timeS + w === 0 ? prior : (r.workS + prior * w) / (r.timeS + w);
    }
    return mu;
  }

  /** Committed work (estimated seconds) of the admitted, unfinished workflows. */
  get committedS(): number {
    let sum = 0;
    for (const w of this.workflows.values()) sum += w.unreleasedS + w.releasedS;
    return sum;
  }

  decide(now: number, req: AdmissionRequest): AdmissionDecision {
    const ok = this.fits(now, req, 0);
    const predictedS = this.predict(now, req);
    if (ok) return { admit: true, bestEffort: false, predictedS, sloS: req.sloS };
    const retryAfterS = this.retryAfter(now, req);
    if (!req.bestEffortAllowed) return { admit: false, bestEffort: false, predictedS, retryAfterS };
    let latest = now + req.sloS * this.config.bestEffortSloFactor;
    for (const w of this.workflows.values()) if (!w.bestEffort) latest = Math.max(latest, w.deadlineS + 1);
    return { admit: true, bestEffort: true, predictedS, sloS: latest - now, retryAfterS };
  }

  /** A workflow was admitted (guaranteed or best-effort) with its deadline and expected work. Repeats change nothing. */
  admitted(id: string, a: { deadlineS: number; workS: number; bestEffort: boolean }): void {
    if (this.workflows.has(id)) return;
    this.workflows.set(id, { deadlineS: a.deadlineS, bestEffort: a.bestEffort, unreleasedS: a.workS, releasedS: 0 });
  }

  /** A stage was released: its calls as dispatched, and the workflow's expected work after it. Repeats change nothing. */
  stageReleased(id: string, calls: readonly ReleasedWork[], remainingWorkS: number): void {
    const w = this.workflows.get(id);
    for (const c of calls) {
      if (this.calls.has(c.callId)) continue;
      this.calls.set(c.callId, { workflowId: id, instanceId: c.instanceId, estimateS: c.estimateS });
      if (w !== undefined) w.releasedS += c.estimateS;
    }
    if (w !== undefined) w.unreleasedS = Math.max(0, remainingWorkS);
  }

  /**
   * Calls finished (or failed, or were cancelled) on one instance. `backlogged`: the instance still
   * has calls queued in front of its server, so it was saturated until now and the interval since its
   * previous report measures its rate. Unknown or repeated call ids change nothing.
   */
  callsFinished(now: number, instanceId: string, callIds: readonly string[], backlogged: boolean): void {
    let doneS = 0;
    for (const id of callIds) {
      const c = this.calls.get(id);
      if (c === undefined) continue;
      this.calls.delete(id);
      const w = this.workflows.get(c.workflowId);
      if (w !== undefined) w.releasedS = Math.max(0, w.releasedS - c.estimateS);
      if (c.instanceId === instanceId) doneS += c.estimateS;
    }
    let r = this.rates.get(instanceId);
    if (r === undefined) {
      r = { workS: 0, timeS: 0, lastAtS: null, backlogged: false };
      this.rates.set(instanceId, r);
    }
    if (r.lastAtS !== null && now > r.lastAtS) {
      const fade = 2 ** (-(now - r.lastAtS) / this.config.halfLifeS);
      r.workS *= fade;
      r.timeS *= fade;
      if (r.backlogged) {
        r.workS += doneS;
        r.timeS += now - r.lastAtS;
      }
    }
    if (r.lastAtS === null || now >= r.lastAtS) r.lastAtS = now;
    r.backlogged = backlogged;
  }

  /** A workflow ended (done, failed, cancelled): its reserved work is released. Its calls still count for μ. */
  ended(id: string): void {
    this.workflows.delete(id);
  }

  snapshot(): WorkflowAdmissionSnapshot {
    return { workflows: Object.fromEntries(this.workflows), calls: Object.fromEntries(this.calls), rates: Object.fromEntries(this.rates) };
  }

  /** Admitted workflows as the fluid schedule orders them, with their committed work drained by `drainS` of work. */
  private queue(drainS: number): { deadlineS: number; bestEffort: boolean; prefixS: number }[] {
    const ws = [...this.workflows.values()];
    if (this.config.queueOrder === "deadline") ws.sort((a, b) => a.deadlineS - b.deadlineS);
    let prefix = 0;
    return ws.map((w) => {
      prefix += w.unreleasedS + w.releasedS;
      return { deadlineS: w.deadlineS, bestEffort: w.bestEffort, prefixS: Math.max(0, prefix - drainS) };
    });
  }

  private aheadS(q: ReturnType<WorkflowAdmission["queue"]>, deadlineS: number): number {
    if (this.config.queueOrder === "arrival") return q.at(-1)?.prefixS ?? 0;
    let ahead = 0;
    for (const e of q) {
      if (e.deadlineS > deadlineS) break;
      ahead = e.prefixS;
    }
    return ahead;
  }

  private predict(now: number, req: AdmissionRequest): number {
    return Math.max(req.criticalPathS, (this.aheadS(this.queue(0), now + req.sloS) + req.workS) / this.rateS);
  }

  /** Whether the workflow would be admitted `afterS` from now, the pool having drained meanwhile. */
  private fits(now: number, req: AdmissionRequest, afterS: number): boolean {
    const mu = this.rateS;
    const h = this.config.headroom;
    const t = now + afterS;
    const deadlineS = t + req.sloS;
    const q = this.queue(mu * afterS);
    if (Math.max(req.criticalPathS, (h * (this.aheadS(q, deadlineS) + req.workS)) / mu) > req.sloS) return false;
    if (this.config.queueOrder === "arrival") return true;
    // Guaranteed workflows behind it must not turn late because of it (already late ones do not veto).
    for (const e of q) {
      if (e.deadlineS <= deadlineS || e.bestEffort) continue;
      const slack = e.deadlineS - t;
      if ((h * e.prefixS) / mu <= slack && (h * (e.prefixS + req.workS)) / mu > slack) return false;
    }
    return true;
  }

  /**
   * When the same workflow would be admitted if nothing else were: the committed work drains at μ in
   * queue order. Candidates are the moments its own backlog condition is first met and those at which
   * its deadline passes another's; null when it cannot be admitted even by an empty pool.
   */
  private retryAfter(now: number, req: AdmissionRequest): number | null {
    const mu = this.rateS;
    const h = this.config.headroom;
    if (req.criticalPathS > req.sloS || (h * req.workS) / mu > req.sloS) return null;
    const q = this.queue(0);
    const totalS = q.at(-1)?.prefixS ?? 0;
    const allowedS = (mu * req.sloS) / h - req.workS;
    const candidates = new Set<number>([Math.max(0, (this.aheadS(q, now + req.sloS) - allowedS) / mu), totalS / mu]);
    for (const e of q) {
      candidates.add(Math.max(0, (e.prefixS - allowedS) / mu));
      if (e.deadlineS > now + req.sloS) candidates.add(e.deadlineS - now - req.sloS + 1e-6);
    }
    const sorted = [...candidates].sort((a, b) => a - b);
    const at = sorted.find((tau) => tau > 0 && this.fits(now, req, tau)) ?? totalS / mu;
    return Math.max(1, Math.ceil(at));
  }
}
