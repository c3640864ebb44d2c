/**
 * fcfs: first come, first served. Why: vLLM's own order; the baseline queue.
 * Inputs: the time a call reached the instance. Trade-offs: ignores deadlines, so a late workflow's
 * call waits behind fresh ones.
 */
import type { QueuePolicy } from "./types";

export const fcfs: QueuePolicy = { name: "fcfs", key: (_call, _est, enqueuedAt) => enqueuedAt };
