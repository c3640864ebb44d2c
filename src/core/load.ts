/**
 * L_m, the load the dispatcher balances. `outstanding` (hexflow default): estimated seconds of the
 * calls queued at the instance plus what remains of its running calls' estimates. `cumulative`
 * (the authors' code): every estimate ever assigned, never reduced.
 */
export type LoadMode = "outstanding" | "cumulative";

interface InstanceLoad {
  queued: Map<string, number>;
  queuedSum: number;
  running: Map<string, { est: number; startedAt: number }>;
  cumulative: number;
}

export class LoadTracker {
  private readonly byInstance = new Map<string, InstanceLoad>();

  constructor(readonly mode: LoadMode) {}

  private of(instanceId: string): InstanceLoad {
    let l = this.byInstance.get(instanceId);
    if (l === undefined) {
      l = { queued: new Map(), queuedSum: 0, running: new Map(), cumulative: 0 };
      this.byInstance.set(instanceId, l);
    }
    return l;
  }

  assign(instanceId: string, callId: string, estimateS: number): void {
    const l = this.of(instanceId);
    if (l.queued.has(callId) || l.running.has(callId)) return;
    l.queued.set(callId, estimateS);
    l.queuedSum += estimateS;
    l.cumulative += estimateS;
  }

  start(instanceId: string, callId: string, now: number): void {
    const l = this.of(instanceId);
    const est = l.queued.get(callId);
    if (est === undefined) return;
    l.queued.delete(callId);
    l.queuedSum -= est;
    l.running.set(callId, { est, startedAt: now });
  }

  /** A finished call, or one taken back for re-dispatch: it leaves the outstanding load. */
  release(instanceId: string, callId: string): void {
    const l = this.of(instanceId);
    const est = l.queued.get(callId);
    if (est !== undefined) {
      l.queued.delete(callId);
      l.queuedSum -= est;
    }
    l.running.delete(callId);
    if (l.queued.size === 0) l.queuedSum = 0;
  }

  load(instanceId: string, now: number): number {
    const l = this.of(instanceId);
    if (this.mode === "cumulative") return l.cumulative;
    let sum = l.queuedSum;
    for (const r of l.running.values()) sum += Math.max(0, r.est - (now - r.startedAt));
    return sum;
  }

  counts(instanceId: string): { queued: number; running: number } {
    const l = this.of(instanceId);
    return { queued: l.queued.size, running: l.running.size };
  }
}
