import { canAdmit, kvClaim, type AdmissionLoad } from "../core/admission";
import { Dispatcher } from "../core/dispatcher";
import { MinHeap } from "../core/min-heap";
import { InstanceQueue } from "../core/instance-queue";
import { instantiatePolicy, type PolicySpec } from "../core/policies";
import { forkRng } from "../core/rng";
import { completeCall, releaseNextStage, startWorkflow, type ReleaseContext, type ReleasedCall, type WorkflowState } from "../core/workflow-run";
import type { SimInstance } from "./cluster";
import { createEngine, type EngineKind } from "./engine/create";
import type { AdmissionSource, Engine } from "./engine/types";
import type { WorkloadItem } from "./workload";
import { callCount } from "../core/workflow";
import { BreakdownRecorder, type Breakdown } from "./breakdown";
import { clairvoyant } from "./oracle";
import { SimAdmission, type RejectedWorkflow, type SimAdmissionOptions } from "./sim-admission";

export type { EngineKind };

export interface SimConfig {
  policy: Readonly<PolicySpec>;
  alpha: number;
  instances: readonly SimInstance[];
  engine: EngineKind;
  workload: readonly WorkloadItem[];
  /** Every workflow's end-to-end SLO in seconds (scale × base SLO). */
  sloS: number;
  seed: number;
  /** Workflow admission at each arrival (core/workflow-admission); absent, every workflow runs. */
  admission?: SimAdmissionOptions;
  /** Measurement only: calls are released with what no scheduler knows (sim/oracle.ts). */
  oracle?: boolean;
  /** Measurement only: each result carries where its time went (sim/breakdown.ts). */
  breakdown?: boolean;
}

export interface WorkflowResult {
  id: string;
  arrivalS: number;
  finishS: number;
  latencyS: number;
  calls: number;
  /** The workflow's own SLO, when it has one or admission runs (attainment is against it, not a best-effort one). */
  sloS?: number;
  /** Admitted as best-effort (admission runs only). */
  bestEffort?: boolean;
  breakdown?: Breakdown;
}

export interface InstanceUsage {
  id: string;
  calls: number;
  /** Seconds the engine spent in steps. */
  busyS: number;
}

export interface SimOutput {
  workflows: WorkflowResult[];
  instances: InstanceUsage[];
  calls: number;
  endS: number;
  preemptions: number;
  engineSteps: number;
  /** Workflows turned away at arrival (admission runs only). */
  rejected?: RejectedWorkflow[];
}

interface Node {
  inst: SimInstance;
  engine: Engine;
  queue: InstanceQueue;
  /** Admitted to the server, not yet taken by its engine (vLLM's FCFS waiting list); gated nodes only. */
  waiting: ReleasedCall[];
  /** What the gate has admitted and not seen finish; claims by call id. */
  load: AdmissionLoad;
  claims: Map<string, number>;
  source: AdmissionSource;
  busy: boolean;
  calls: number;
  busyS: number;
}

interface StepEnd {
  t: number;
  seq: number;
  node: Node;
}

/**
 * Discrete-event simulation of one pool serving a workload under one policy. Runs the production
 * scheduling code (workflow-run, dispatcher, instance queue) against engine models; no I/O, no
 * wall clock, all randomness from `seed`. Events are ordered by (time, kind, sequence): at equal
 * times step completions come before arrivals, and steps in the order they were planned.
 */
export function runSimulation(cfg: SimConfig): SimOutput {
  const runtime = instantiatePolicy(cfg.policy);
  const dispatcher = new Dispatcher(cfg.instances, runtime, forkRng(cfg.seed, 3), cfg.alpha);
  const ctx: ReleaseContext = {
    planner: runtime.planner,
    meanStepTime: (s) => dispatcher.estimator.meanStepTime(s),
    expectedOutput: (s) => dispatcher.estimator.expectedOutput(s),
  };
  // Step ends live in a heap ordered by (time, sequence); arrivals are already sorted and are merged
  // in by a cursor, after any step that ends at the same instant.
  const stepEnds = new MinHeap<StepEnd>((a, b) => a.t < b.t || (a.t === b.t && a.seq < b.seq));
  let seq = 0;

  const nodes = new Map<string, Node>();
  for (const inst of cfg.instances) {
    const queue = new InstanceQueue(runtime.queue);
    const waiting: ReleasedCall[] = [];
    // Gated (the serving system): our queue -> admission gate -> the server's FCFS list -> engine.
    // Ungated (the authors' model): the engine takes straight from our queue.
    const source: AdmissionSource = inst.admission === undefined ? { peek: () => queue.peek()?.call, pop: () => queue.pop()?.call } : { peek: () => waiting[0], pop: () => waiting.shift() };
    nodes.set(inst.id, { inst, engine: createEngine(cfg.engine, inst), queue, waiting, load: { calls: 0, tokens: 0 }, claims: new Map(), source, busy: false, calls: 0, busyS: 0 });
  }
  const workflows = new Map<string, WorkflowState>();
  const ownerOf = new Map<string, WorkflowState>();
  const callsOf = new Map<string, number>();
  const results: WorkflowResult[] = [];
  let calls = 0;
  const admission = cfg.admission === undefined ? undefined : new SimAdmission(cfg.admission, dispatcher, cfg.policy.queue);
  /** Per admitted workflow (admission or per-workflow SLOs only): its own SLO and class for the results. */
  const sloOf = new Map<string, { sloS: number; bestEffort?: boolean }>();
  const breakdown = cfg.breakdown === true ? new BreakdownRecorder(cfg.engine, cfg.instances) : undefined;

  /** The instance object's admission (core/admission), as the serving system runs it. */
  const admit = (node: Node, now: number): void => {
    const limits = node.inst.admission;
    if (limits === undefined) return;
    for (let next = node.queue.peek(); next !== undefined && canAdmit(node.load, next.call, limits); next = node.queue.peek()) {
      node.queue.pop();
      const claim = kvClaim(next.call);
      node.waiting.push(next.call);
      node.claims.set(next.call.id, claim);
      node.load.calls += 1;
      node.load.tokens += claim;
      dispatcher.started(node.inst.id, next.call.id, now);
    }
  };

  const startStep = (node: Node, now: number): void => {
    admit(node, now);
    if (node.busy) return;
    const plan = node.engine.planStep(node.source);
    if (plan === null) return;
    if (node.inst.admission === undefined) for (const id of plan.admitted) dispatcher.started(node.inst.id, id, now);
    if (breakdown !== undefined) for (const id of plan.admitted) breakdown.started(id, node.inst, now);
    node.busy = true;
    node.busyS += plan.durationS;
    stepEnds.push({ t: now + plan.durationS, seq: seq++, node });
  };

  const dispatch = (released: ReleasedCall[], now: number): void => {
    const touched: Node[] = [];
    const bound: { callId: string; instanceId: string; estimateS: number }[] = [];
    for (const call of released) {
      const a = dispatcher.assign(call, now);
      if (!a.ok) throw new Error(`simulator: ${a.error.message}`);
      const node = nodes.get(a.instanceId);
      if (node === undefined) throw new Error(`simulator: unknown instance ${a.instanceId}`);
      if (!node.engine.fits(call)) throw new Error(`simulator: call ${call.id} (${call.inputTokens} tokens) can never fit ${node.inst.id}'s KV cache`);
      const owner = workflows.get(call.workflowId);
      if (owner !== undefined) ownerOf.set(call.id, owner);
      node.queue.push(call, a.estimateS, now);
      breakdown?.released(call.id, call, now);
      bound.push({ callId: call.id, instanceId: a.instanceId, estimateS: a.estimateS });
      node.calls += 1;
      calls += 1;
      touched.push(node);
    }
    const first = released[0];
    const w = first === undefined ? undefined : workflows.get(first.workflowId);
    if (admission !== undefined && w !== undefined) admission.released(w, bound);
    for (const node of touched) startStep(node, now);
  };

  const release = (w: WorkflowState, now: number): ReleasedCall[] => {
    const calls = releaseNextStage(w, ctx, now);
    return cfg.oracle === true ? clairvoyant(calls, w, dispatcher.estimator, now) : calls;
  };

  const arrivals = [...cfg.workload].sort((a, b) => a.arrivalS - b.arrivalS);
  let nextArrival = 0;
  let now = 0;
  for (;;) {
    const step = stepEnds.peek();
    const item = arrivals[nextArrival];
    if (item !== undefined && (step === undefined || item.arrivalS < step.t)) {
      now = item.arrivalS;
      nextArrival += 1;
      const ownSloS = item.sloS ?? cfg.sloS;
      const verdict = admission?.arrive(item, ownSloS, now) ?? { run: true, scheduleSloS: ownSloS, bestEffort: false };
      if (!verdict.run) continue;
      if (admission !== undefined) sloOf.set(item.id, { sloS: ownSloS, bestEffort: verdict.bestEffort });
      else if (item.sloS !== undefined) sloOf.set(item.id, { sloS: ownSloS });
      const w = startWorkflow(item.id, item.spec, item.arrivalS, verdict.scheduleSloS);
      workflows.set(w.id, w);
      callsOf.set(w.id, callCount(item.spec));
      dispatch(release(w, now), now);
      continue;
    }
    const e = stepEnds.pop();
    if (e === undefined) break;
    now = e.t;
    const node = e.node;
    node.busy = false;
    const finished = node.engine.finishStep();
    for (const callId of finished) {
      dispatcher.finished(node.inst.id, callId);
      const claim = node.claims.get(callId);
      if (claim !== undefined) {
        node.claims.delete(callId);
        node.load.calls -= 1;
        node.load.tokens -= claim;
      }
      const w = ownerOf.get(callId);
      ownerOf.delete(callId);
      if (w === undefined) continue;
      const outcome = completeCall(w, callId, now);
      breakdown?.finished(callId, w.id, outcome === "stage-done" || outcome === "workflow-done", now);
      if (outcome === "stage-done") dispatch(release(w, now), now);
      else if (outcome === "workflow-done") {
        const parts = breakdown?.take(w.id);
        results.push({ id: w.id, arrivalS: w.arrivalS, finishS: now, latencyS: now - w.arrivalS, calls: callsOf.get(w.id) ?? 0, ...sloOf.get(w.id), ...(parts === undefined ? {} : { breakdown: parts }) });
        workflows.delete(w.id);
        admission?.ended(w.id);
      }
    }
    startStep(node, now);
    // Reported after the instance refilled from its queue, as a real instance's report arrives.
    admission?.finished(now, node.inst.id, finished);
  }
  if (workflows.size > 0) throw new Error(`simulator: ${workflows.size} workflows never finished (engine stalled)`);
  let preemptions = 0;
  let engineSteps = 0;
  for (const n of nodes.values()) {
    const s = n.engine.stats();
    preemptions += s.preemptions;
    engineSteps += s.stepsRun;
  }
  const instances = [...nodes.values()].map((n) => ({ id: n.inst.id, calls: n.calls, busyS: n.busyS }));
  return { workflows: results, instances, calls, endS: now, preemptions, engineSteps, ...(admission === undefined ? {} : { rejected: admission.rejected }) };
}
