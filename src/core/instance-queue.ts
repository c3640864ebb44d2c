import { IndexedHeap } from "./indexed-heap";
import type { QueuePolicy } from "./queue/types";
import type { ReleasedCall } from "./workflow-run";

export interface QueuedCall {
  call: ReleasedCall;
  estimateS: number;
  enqueuedAt: number;
  key: number;
  seq: number;
}

/** The queue in front of one vLLM server; its policy decides who is admitted next. */
export class InstanceQueue {
  private seq = 0;
  private readonly heap = new IndexedHeap<QueuedCall>(
    (a, b) => a.key < b.key || (a.key === b.key && a.seq < b.seq),
    (q) => q.call.id,
  );

  constructor(readonly policy: QueuePolicy) {}

  /** Every queued entry, in no particular order (for persistence and re-keying). */
  entries(): readonly QueuedCall[] {
    return this.heap.values();
  }

  get size(): number {
    return this.heap.size;
  }

  /** Queues a call; returns the entry (key and sequence) so a caller can persist and restore it. */
  push(call: ReleasedCall, estimateS: number, now: number): QueuedCall {
    const entry = { call, estimateS, enqueuedAt: now, key: this.policy.key(call, estimateS, now), seq: this.seq++ };
    this.heap.push(entry);
    return entry;
  }

  /** Puts back an entry persisted earlier, keeping its key and its place among equal keys. */
  restore(entry: QueuedCall): void {
    this.seq = Math.max(this.seq, entry.seq + 1);
    this.heap.push(entry);
  }

  has(callId: string): boolean {
    return this.heap.has(callId);
  }

  peek(): QueuedCall | undefined {
    return this.heap.peek();
  }

  pop(): QueuedCall | undefined {
    return this.heap.pop();
  }

  remove(callId: string): QueuedCall | undefined {
    return this.heap.remove(callId);
  }
}
