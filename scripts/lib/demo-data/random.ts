/** Small draws on top of src/core/rng that every demo-data generator needs. */
import { type Rng, uniformInt } from "../../../src/core/rng";

export function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[uniformInt(rng, items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

export function chance(rng: Rng, p: number): boolean {
  return rng.next() < p;
}

/** Integer in [lo, hi], both ends included. */
export function between(rng: Rng, lo: number, hi: number): number {
  return lo + uniformInt(rng, hi - lo + 1);
}

export function weightedIndex(rng: Rng, weights: readonly number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let target = rng.next() * total;
  for (let i = 0; i < weights.length; i++) {
    target -= weights[i] ?? 0;
    if (target < 0) return i;
  }
  return weights.length - 1;
}

export function weightedPick<T>(rng: Rng, items: readonly T[], weight: (item: T) => number): T {
  return items[weightedIndex(rng, items.map(weight))] ?? pick(rng, items);
}

/** Retail prices end in .99 (or a round hundred minus a cent for bikes), as shelf prices do. */
export function shelfPriceCents(dollarsApprox: number): number {
  if (dollarsApprox >= 500) return Math.round(dollarsApprox / 50) * 5000 - 1;
  if (dollarsApprox >= 20) return Math.round(dollarsApprox) * 100 - 1;
  return Math.round(dollarsApprox * 2) * 50 - 1;
}
