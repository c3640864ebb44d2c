/**
 * rr: round-robin over the pool, blind to GPU speed and load.
 * Why: what vLLM behind a plain load balancer does; the paper's main baseline.
 * Inputs: registration order only. Trade-offs: fair in count, so slow GPUs get as many calls as fast ones.
 */
import type { DispatchPolicy } from "./types";

export function createRoundRobin(): DispatchPolicy {
  let next = 0;
  return {
    name: "rr",
    pick({ candidates }) {
      const i = next % candidates.length;
      next = (next + 1) % Math.max(1, candidates.length);
      return i;
    },
  };
}
