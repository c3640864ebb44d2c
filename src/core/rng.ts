/**
 * Seeded randomness for the pure layers. Mulberry32: tiny, fast, and good enough for
 * scheduling tie-breaks and workload generation (not for anything security-related).
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  return {
    next(): number {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Derives an independent stream, so adding draws in one component does not shift another's. */
export function forkRng(seed: number, stream: number): Rng {
  return createRng((Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(stream + 1, 0xc2b2ae35)) >>> 0);
}

export function uniformInt(rng: Rng, n: number): number {
  return Math.min(n - 1, Math.floor(rng.next() * n));
}

export function exponential(rng: Rng, rate: number): number {
  return -Math.log(1 - rng.next()) / rate;
}

/** Standard normal by Box-Muller (one value per call; the pair's second half is dropped for simplicity). */
export function normal(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
