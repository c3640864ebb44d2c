/**
 * L_m, the load the dispatcher balances. `outstanding` (hexflow default): estimated seconds of the
 * calls queued at the instance plus what remains of its running calls' estimates. `cumulative`
 * (the authors' code): every estimate ever assigned, never reduced. `loadAhead` is the outstanding load a
 * new call would wait behind in a priority queue: running calls, and queued ones whose queue key is not larger.
 */
export type LoadMode = "outstanding" | "cumulative";

interface InstanceLoad {
  queued: Map<string, { est: number; key: number }>;
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

  /**
   * `key`: the call's queue key on that instance (smaller runs first). A call restored without one counts as
   * ahead of every newcomer, which errs towards seeing more load.
   */
  assign(instanceId: string, callId: string, estimateS: number, key = -Infinity): void {
    const l = this.of(instanceId);
    if (l.queued.has(callId) || l.running.has(callId)) return;
    l.queued.set(callId, { est: estimateS, key });
    l.queuedSum += estimateS;
    l.cumulative += estimateS;
  }

  start(instanceId: string, callId: string, now: number): void {
    const l = this.of(instanceId);
    const q = l.queued.get(callId);
    if (q === undefined) return;
    l.queued.delete(callId);
    l.queuedSum -= q.est;
    l.running.set(callId, { est: q.est, startedAt: now });
  }

  /** A finished call, or one taken back for re-dispatch: it leaves the outstanding load. */
  release(instanceId: string, callId: string): void {
    const l = this.of(instanceId);
    const q = l.queued.get(callId);
    if (q !== undefined) {
      l.queued.delete(callId);
      l.queuedSum -= q.est;
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

  /** Outstanding load a call with queue key `key` would wait behind (outstanding mode; cumulative has no queue view). */
  loadAhead(instanceId: string, key: number, now: number): number {
    const l = this.of(instanceId);
    if (this.mode === "cumulative") return l.cumulative;
    let sum = 0;
    for (const q of l.queued.values()) if (q.key <= key) sum += q.est;
    for (const r of l.running.values()) sum += Math.max(0, r.est - (now - r.startedAt));
    return sum;
  }

  counts(instanceId: string): { queued: number; running: number } {
    const l = this.of(instanceId);
    return { queued: l.queued.size, running: l.running.size };
  }
}
