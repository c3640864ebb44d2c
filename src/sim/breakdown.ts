/**
 * Where a workflow's time goes (measurement only; SimConfig.breakdown): each stage ends with its last call, and
 * that call's time from release to finish splits into the wait before its engine took it, the slowdown from the
 * batch it ran in (its time in the engine beyond what it takes alone there), the slowdown of the GPU type it was
 * placed on (alone there beyond alone on its fastest type), and its floor. Summed over the stages, the four add up
 * to the workflow's latency, so a gap to the floor can be read as queueing, batching or placement.
 */
import type { SimInstance } from "./cluster";
import type { EngineKind } from "./engine/create";
import { FloorModel } from "./limits";

export interface Breakdown {
  waitS: number;
  batchS: number;
  gpuS: number;
  floorS: number;
}

interface Pending {
  releaseS: number;
  size: { inputTokens: number; outputTokens: number };
  startS?: number;
  inst?: SimInstance;
}

export class BreakdownRecorder {
  private readonly floor: FloorModel;
  private readonly calls = new Map<string, Pending>();
  private readonly totals = new Map<string, Breakdown>();

  constructor(kind: EngineKind, instances: readonly SimInstance[]) {
    this.floor = new FloorModel(kind, instances);
  }

  released(callId: string, size: Pending["size"], now: number): void {
    this.calls.set(callId, { releaseS: now, size });
  }

  /** The engine took the call (a preempted call keeps its first start: recomputing it counts as batching). */
  started(callId: string, inst: SimInstance, now: number): void {
    const c = this.calls.get(callId);
    if (c !== undefined && c.startS === undefined) Object.assign(c, { startS: now, inst });
  }

  finished(callId: string, workflowId: string, lastOfStage: boolean, now: number): void {
    const c = this.calls.get(callId);
    this.calls.delete(callId);
    if (c === undefined || c.startS === undefined || c.inst === undefined || !lastOfStage) return;
    const alone = this.floor.loneSeconds(c.inst, c.size);
    const fastest = this.floor.callSeconds(c.size);
    const t = this.totals.get(workflowId) ?? { waitS: 0, batchS: 0, gpuS: 0, floorS: 0 };
    t.waitS += c.startS - c.releaseS;
    t.batchS += now - c.startS - alone;
    t.gpuS += alone - fastest;
    t.floorS += fastest;
    this.totals.set(workflowId, t);
  }

  take(workflowId: string): Breakdown | undefined {
    const t = this.totals.get(workflowId);
    this.totals.delete(workflowId);
    return t;
  }
}
