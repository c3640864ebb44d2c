import { IndexedHeap } from "./indexed-heap";
import type { QueuePolicy } from "./queue/types";
import type { ReleasedCall } from "./workflow-run";

export interface QueuedCall {
  call: ReleasedCall;
  estimateS: number;
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

  get size(): number {
    return this.heap.size;
  }

  push(call: ReleasedCall, estimateS: number, now: number): void {
    this.heap.push({ call, estimateS, key: this.policy.key(call, estimateS, now), seq: this.seq++ });
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
