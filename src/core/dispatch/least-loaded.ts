/**
 * least-loaded: power-of-d-choices on outstanding work, as Ray Serve routes (d = 2).
 * Why: the strongest simple load-aware baseline; the paper never compared against it.
 * Inputs: L_m and t̂_m(c); the two sampled instances are compared on L_m + t̂_m(c), the time at which
 * this call would finish if work were serial, which is the best use of what it knows on mixed GPUs.
 * Trade-offs: sampling keeps it O(d) and avoids herding on one stale minimum; with few instances a
 * full scan (d = pool size) is slightly better, so d is configuration.
 */
import type { DispatchPolicy } from "./types";

export function createLeastLoaded(choices = 2): DispatchPolicy {
  return {
    name: "least-loaded",
    pick({ candidates, rng }) {
      const n = candidates.length;
      const d = Math.min(Math.max(1, choices), n);
      const picked: number[] = [];
      while (picked.length < d) {
        const i = Math.floor(rng.next() * n);
        if (!picked.includes(i)) picked.push(i);
      }
      let best = picked[0] ?? 0;
      let bestCost = Infinity;
      for (const i of picked) {
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
