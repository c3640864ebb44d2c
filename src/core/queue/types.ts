import type { ReleasedCall } from "../workflow-run";

/**
 * A queue policy orders the calls waiting at one instance by a static key (smaller first, ties
 * FCFS). Static keys suffice: laxity D − t − t̂ shares the term t across the queue, so its order is
 * the order of D − t̂ (DESIGN section 2).
 */
export interface QueuePolicy {
  readonly name: string;
  key(call: ReleasedCall, estimateS: number, enqueuedAt: number): number;
}
