/**
 * random: uniform choice. Why: the floor any load-aware policy must beat.
 * Inputs: the seeded generator. Trade-offs: none worth having; a reference point only.
 */
import type { DispatchPolicy } from "./types";

export function createRandom(): DispatchPolicy {
  return { name: "random", pick: ({ candidates, rng }) => Math.floor(rng.next() * candidates.length) };
}
