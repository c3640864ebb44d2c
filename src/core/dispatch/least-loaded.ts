/**
 * least-loaded: power-of-d-choices on outstanding work; d = 2 is how Ray Serve routes, d = pool size
 * a full scan.
 * Why: the strongest simple load-aware baseline; the paper never compared against it.
 * Inputs: L_m and t̂_m(c); the two sampled instances are compared on L_m + t̂_m(c), the time at which
 * this call would finish if work were serial, which is the best use of what it knows on mixed GPUs.
 * Trade-offs: sampling keeps it O(d) and avoids herding on one stale minimum in a large pool with
 * stale load; with few instances and exact load a full scan is better, so d is configuration.
 */
import type { DispatchPolicy } from "./types";

export function createLeastLoaded(choices: number): DispatchPolicy {
  return {
    name: "least-loaded",
    pick({ candidates, rng }) {
      const n = candidates.length;
      const d = Math.min(Math.max(1, choices), n);
      const sampled = d >= n ? candidates.map((_, i) => i) : sample(n, d, () => rng.next());
      let best = sampled[0] ?? 0;
      let bestCost = Infinity;
      for (const i of sampled) {
        const c = candidates[i];
        if (c === undefined) continue;
        const cost = c.load + c.estimate;
        if (cost < bestCost) {
          bestCost = cost;
          best = i;
        }
      }
      return best;
    },
  };
}

/** d distinct indices of n, uniformly (d < n). */
function sample(n: number, d: number, next: () => number): number[] {
  const picked: number[] = [];
  while (picked.length < d) {
    const i = Math.floor(next() * n);
    if (!picked.includes(i)) picked.push(i);
  }
  return picked;
}
