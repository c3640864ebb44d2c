import { describe, expect, it } from "vitest";
import {
  check,
  DEFAULT_DEGRADATION_CONFIG,
  type DegradationConfig,
  type DegradationState,
  DegradationStateSchema,
  mannWhitneyGreaterP,
  newDegradationState,
  observe,
  rebase,
  type WorkflowSample,
} from "../../src/core/degradation";
import { createRng, exponential, normal, type Rng } from "../../src/core/rng";

/**
 * Synthetic workflow traffic: log-normal latencies (median 60 s, σ_log 0.35, close to the spread of
 * CHESS workflow latencies under load), SLO 3x the median, Poisson arrivals at 0.5 workflows/s.
 * `rho` makes the log-latency an AR(1) series: bursts, as when consecutive workflows share a queue.
 */
class Traffic {
  t = 0;
  private ar = 0;
  constructor(
    private readonly rng: Rng,
    private readonly sigma = 0.35,
    private readonly rho = 0,
  ) {}
  next(factor = 1): WorkflowSample {
    this.t += exponential(this.rng, 0.5);
    this.ar = this.rho * this.ar + Math.sqrt(1 - this.rho * this.rho) * normal(this.rng);
    const latencyS = factor * 60 * Math.exp(this.sigma * this.ar);
    const sloS = 180;
    return { atS: this.t, latencyS, sloS, met: latencyS <= sloS };
  }
}

const CHECK_EVERY = 10;
const cfg = DEFAULT_DEGRADATION_CONFIG;

/** A tuned state: 200 reference samples, then rebased. */
function tuned(traffic: Traffic, config: DegradationConfig = cfg): DegradationState {
  let s = newDegradationState();
  for (let i = 0; i < config.maxReference; i++) s = observe(s, traffic.next(), config);
  // The reference fills to minReference on its own; the rest sits in `current` until the rebase.
  return rebase(s, traffic.t, config);
}

/** Feeds `n` samples with latency x `factor`, checking every CHECK_EVERY; returns the samples until the first trigger. */
function samplesToTrigger(s0: DegradationState, traffic: Traffic, n: number, factor: number): number | null {
  let s = s0;
  for (let i = 1; i <= n; i++) {
    s = observe(s, traffic.next(factor));
    if (i % CHECK_EVERY === 0) {
      const d = check(s, traffic.t);
      s = d.state;
      if (d.trigger) return i;
    }
  }
  return null;
}

describe("Mann–Whitney U", () => {
  it("is near 0.5 for identical samples and tiny for a clear shift", () => {
    const a = Array.from({ length: 50 }, (_, i) => i);
    expect(mannWhitneyGreaterP(a, a)).toBeGreaterThan(0.4);
    const b = a.map((x) => x + 40);
    expect(mannWhitneyGreaterP(a, b)).toBeLessThan(1e-8);
    // The other direction is not evidence of degradation.
    expect(mannWhitneyGreaterP(b, a)).toBeGreaterThan(0.999);
  });

  it("handles ties (all equal gives no evidence)", () => {
    expect(mannWhitneyGreaterP([1, 1, 1, 1], [1, 1, 1])).toBe(1);
  });
});

describe("degradation trigger", () => {
  it("does not fire on stationary traffic", () => {
    const traffic = new Traffic(createRng(7));
    expect(samplesToTrigger(tuned(traffic), traffic, 2000, 1)).toBeNull();
  });

  it("fires on latencies x1.5 within a bounded number of samples, with a readable reason", () => {
    const traffic = new Traffic(createRng(11));
    let s = tuned(traffic);
    for (let i = 0; i < 100; i++) s = observe(s, traffic.next());
    s = { ...s, rebasedAtS: traffic.t - cfg.cooldownS }; // past the cooldown
    let fired: { at: number; reason: string } | null = null;
    for (let i = 1; i <= 200 && fired === null; i++) {
      s = observe(s, traffic.next(1.5));
      if (i % CHECK_EVERY === 0) {
        const d = check(s, traffic.t);
        s = d.state;
        if (d.trigger) fired = { at: i, reason: d.reason };
      }
    }
    expect(fired).not.toBeNull();
    expect(fired?.at ?? Infinity).toBeLessThanOrEqual(80);
    expect(fired?.reason).toMatch(/^degraded: p=/);
    expect(s.lastTriggerAtS).toBe(traffic.t);
  });

  it("measures the false-positive rate on stationary traffic (1,000 seeded runs, 500 for the variants)", () => {
    const checks = 100; // 1,000 workflows after each tuning, a check every 10
    const settings = [
      { name: "iid, σ_log 0.35", sigma: 0.35, rho: 0, bound: 0.01, runs: 1000 },
      { name: "iid, σ_log 0.6", sigma: 0.6, rho: 0, bound: 0.02, runs: 500 },
      { name: "bursty AR(1) ρ 0.5, σ_log 0.35", sigma: 0.35, rho: 0.5, bound: 0.03, runs: 500 },
    ];
    const lines: string[] = [];
    for (const { name, sigma, rho, bound, runs } of settings) {
      let fired = 0;
      for (let seed = 1; seed <= runs; seed++) {
        const traffic = new Traffic(createRng(1000 + seed), sigma, rho);
        if (samplesToTrigger(tuned(traffic), traffic, checks * CHECK_EVERY, 1) !== null) fired++;
      }
      lines.push(`${name}: ${fired}/${runs} runs = ${((100 * fired) / runs).toFixed(1)}%`);
      expect(fired / runs).toBeLessThanOrEqual(bound);
    }
    console.log(`false-positive rate (runs with >= 1 trigger over ${checks} checks):\n  ${lines.join("\n  ")}`);
  }, 60_000);

  it("measures the detection delay for x1.5 and x1.2 shifts", () => {
    const report: string[] = [];
    for (const factor of [1.5, 1.2]) {
      const delays: number[] = [];
      let missed = 0;
      for (let seed = 1; seed <= 200; seed++) {
        const traffic = new Traffic(createRng(5000 + seed));
        let s = tuned(traffic);
        s = { ...s, rebasedAtS: -Infinity }; // measure the statistics, not the cooldown
        const d = samplesToTrigger(s, traffic, 500, factor);
        if (d === null) missed++;
        else delays.push(d);
      }
      delays.sort((a, b) => a - b);
      const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? Number.NaN;
      report.push(`x${factor}: median ${q(0.5)}, p90 ${q(0.9)} samples to trigger; missed within 500: ${missed}/200`);
      if (factor === 1.5) {
        expect(missed).toBe(0);
        expect(q(0.9)).toBeLessThanOrEqual(60);
      } else {
        expect(missed).toBeLessThanOrEqual(20);
      }
    }
    console.log(`detection delay (check every ${CHECK_EVERY} samples):\n  ${report.join("\n  ")}`);
  }, 60_000);

  it("respects the cooldown after a rebase and after a trigger", () => {
    const traffic = new Traffic(createRng(3));
    let s = tuned(traffic);
    for (let i = 0; i < 100; i++) s = observe(s, traffic.next(2));
    // 100 samples at 0.5/s is ~200 s: still inside the 300 s cooldown of the rebase.
    const early = check(s, (s.rebasedAtS ?? 0) + 100);
    expect(early.trigger).toBe(false);
    expect(early.reason).toMatch(/cooldown/);
    const later = check(s, (s.rebasedAtS ?? 0) + cfg.cooldownS + 1);
    expect(later.trigger).toBe(true);
    const again = check(later.state, (s.rebasedAtS ?? 0) + cfg.cooldownS + 60);
    expect(again.trigger).toBe(false);
    expect(again.reason).toMatch(/cooldown/);
  });

  it("needs the minimum counts in both windows", () => {
    const traffic = new Traffic(createRng(4));
    let s = newDegradationState();
    for (let i = 0; i < cfg.minReference - 1; i++) s = observe(s, traffic.next());
    expect(check(s, 1e6).reason).toMatch(/reference has 49 < 50/);
    s = rebase(s, traffic.t);
    s = observe(s, traffic.next()); // tops the reference up to its minimum
    expect(s.reference).toHaveLength(cfg.minReference);
    for (let i = 0; i < cfg.minCurrent - 1; i++) s = observe(s, traffic.next(3));
    const d = check(s, traffic.t + cfg.cooldownS);
    expect(d.trigger).toBe(false);
    expect(d.reason).toMatch(/current window has 39 < 40/);
    s = observe(s, traffic.next(3));
    expect(check(s, traffic.t + cfg.cooldownS).trigger).toBe(true);
  });

  it("bounds both windows and ages samples out", () => {
    const traffic = new Traffic(createRng(5));
    let s = tuned(traffic);
    expect(s.reference).toHaveLength(cfg.maxReference);
    for (let i = 0; i < 500; i++) s = observe(s, traffic.next());
    expect(s.current).toHaveLength(cfg.maxReference);
    expect(check(s, traffic.t).stats.nCurrent).toBe(cfg.maxCurrent);
    expect(check(s, traffic.t + cfg.maxAgeS + 1).stats.nCurrent).toBe(0);
  });

  it("survives a JSON round trip through its schema", () => {
    const traffic = new Traffic(createRng(6));
    let s = tuned(traffic);
    for (let i = 0; i < 60; i++) s = observe(s, traffic.next(1.5));
    const back = DegradationStateSchema.parse(JSON.parse(JSON.stringify(s)));
    expect(back).toEqual(s);
    expect(check(back, traffic.t + 1e4)).toEqual(check(s, traffic.t + 1e4));
  });
});
