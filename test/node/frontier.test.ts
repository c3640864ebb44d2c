/**
 * The service frontier (sim/frontier*.ts): the operating curves come from the simulator's own engine, the
 * pool's cheapest mix of them is exact on hand-made points, and the model's P95 never beats what the simulator
 * measures for a real policy at the same rate.
 */
import { describe, expect, it } from "vitest";
import { sortedPercentile } from "../../src/core/stats";
import { getPolicy } from "../../src/core/policies";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { operatingCurve, type OperatingPoint } from "../../src/sim/frontier";
import { criticalSeconds, leastMeanStretch, p95Bound, servingPlan, stretchDemand, workSeconds, type Supply, type WorkflowWork } from "../../src/sim/frontier-bounds";
import { scenarioFrontier } from "../../src/sim/frontier-scenario";
import { FloorModel } from "../../src/sim/limits";
import { runScenario, scenarioBaseSlo, type Scenario } from "../../src/sim/scenario";
import { buildWorkload } from "../../src/sim/workload";

/** A one-class point: rate and stretch. */
const point = (concurrency: number, workRate: number, stretch: number): OperatingPoint => ({ concurrency, workRate, stretch, classShare: [1], classStretch: [stretch] });
const HAND: Supply = { count: 2, points: [point(1, 1, 1), point(8, 6, 1.5)] };
const demand = (...xs: [number, number][]) => xs.map(([limit, work]) => ({ cls: 0, limit, work }));

describe("operating curves", () => {
  const instances = buildInstances(["A100"]);
  const a100 = instances[0];
  if (a100 === undefined) throw new Error("no instance");
  const workload = buildWorkload({ kind: "synthetic" }, 60, 1, 3);
  const mix = workload.flatMap((w) => w.spec.stages.flatMap((s) => s.calls.map((c) => ({ ...c, cls: c.inputTokens > 4000 ? 1 : 0 }))));
  const floor = new FloorModel("vllm", instances);
  const curve = operatingCurve("vllm", a100, mix, floor, { concurrencies: [1, 8, 32], window: 150, seed: 1, classes: 2 });

  it("a lone call takes its floor, and batching buys rate at the price of stretch", () => {
    const [one, eight, many] = curve;
    if (one === undefined || eight === undefined || many === undefined) throw new Error("missing points");
    expect(one.stretch).toBeCloseTo(1, 2);
    expect(one.workRate).toBeCloseTo(1, 2);
    expect(eight.workRate).toBeGreaterThan(4 * one.workRate);
    expect(many.workRate).toBeGreaterThan(eight.workRate);
    expect(eight.stretch).toBeGreaterThan(one.stretch);
    expect(many.stretch).toBeGreaterThan(eight.stretch);
    // The classes split the work, and their stretches average to the point's.
    for (const p of curve) {
      expect((p.classShare[0] ?? 0) + (p.classShare[1] ?? 0)).toBeCloseTo(1, 9);
      expect((p.classShare[0] ?? 0) * (p.classStretch[0] ?? 0) + (p.classShare[1] ?? 0) * (p.classStretch[1] ?? 0)).toBeCloseTo(p.stretch, 9);
    }
  });
});

describe("the serving programme", () => {
  it("serves tight work only where the stretch allows, and finds the best multiple", () => {
    // Tight work (stretch ≤ 1.2) only at c=1: θ ≤ τ1 and θ/6 = τ8 with τ1 + τ8 ≤ 2, so θ = 12/7.
    expect(servingPlan([HAND], demand([1.2, 1], [Infinity, 1])).multiple).toBeCloseTo(12 / 7, 6);
    expect(servingPlan([HAND], demand([Infinity, 1])).multiple).toBeCloseTo(12, 6);
    expect(servingPlan([HAND], demand([0.9, 1])).multiple).toBe(0);
  });

  it("keeps each class to the points that serve it", () => {
    // A mixed point serves the classes half and half; a pure point serves class 1 only.
    const mixed: OperatingPoint = { concurrency: 4, workRate: 4, stretch: 1.2, classShare: [0.5, 0.5], classStretch: [1.1, 1.3] };
    const pure: OperatingPoint = { concurrency: 8, workRate: 6, stretch: 1.5, classShare: [0, 1], classStretch: [Number.NaN, 1.5] };
    const supply: Supply[] = [{ count: 1, points: [mixed, pure] }];
    // Class 0 only: the mixed point gives it 2 per second.
    expect(servingPlan(supply, [{ cls: 0, limit: Infinity, work: 1 }]).multiple).toBeCloseTo(2, 6);
    // Class 1 only, any stretch: the pure point's 6 beats the mixed point's 2.
    expect(servingPlan(supply, [{ cls: 1, limit: Infinity, work: 1 }]).multiple).toBeCloseTo(6, 6);
    // Class 1 held to 1.4: only the mixed point qualifies.
    expect(servingPlan(supply, [{ cls: 1, limit: 1.4, work: 1 }]).multiple).toBeCloseTo(2, 6);
    // A class no point serves cannot be served at any rate.
    expect(servingPlan(supply, [{ cls: 2, limit: Infinity, work: 1 }]).multiple).toBe(0);
  });

  it("the least mean stretch is the cheapest concurrency for the rate, by Little's law", () => {
    // Rate 2 fits at c=1 on both instances (stretch 1); rate 4 needs one instance at c=8 part of the time:
    // τ1 = 2 - τ8, 2 - τ8 + 6τ8 = 4 → τ8 = 0.4; cost 1.6·1 + 2.4·1.5 = 5.2 → 1.3.
    expect(leastMeanStretch([HAND], [1], 2)).toBeCloseTo(1, 6);
    expect(leastMeanStretch([HAND], [1], 4)).toBeCloseTo(5.2 / 4, 6);
    expect(leastMeanStretch([HAND], [1], 12.5)).toBe(Infinity);
  });
});

describe("the demand and the bounds", () => {
  const ws: WorkflowWork[] = Array.from({ length: 40 }, (_, i) => ({ stages: [[10 + i], [5, 2 + (i % 3)]].map((st) => st.map((floorS) => ({ floorS, cls: 0 }))) }));

  it("keeps 95% of the workflows to the deadline and gives up the longest", () => {
    const paths = ws.map(criticalSeconds).sort((a, b) => a - b);
    expect(stretchDemand(ws, (paths[37] ?? 0) - 0.5, 0.95)).toBeNull();
    const d = stretchDemand(ws, paths[37] ?? 0, 0.95);
    if (d === null) throw new Error("the 95th percentile path should fit");
    const work = ws.reduce((s, w) => s + workSeconds(w), 0) / ws.length;
    expect(d.reduce((s, x) => s + x.work, 0)).toBeCloseTo(work, 9);
    expect(d.filter((x) => x.limit === Infinity)).toHaveLength(2 * 3);
    // A short call beside a longer one in its stage may stretch further than the workflow.
    expect(Math.max(...d.map((x) => x.limit).filter(Number.isFinite))).toBeGreaterThan((paths[37] ?? 0) / (paths[0] ?? 1));
  });

  it("the P95 bound starts at the floor, grows with the rate and ends at saturation", () => {
    const supply = [HAND];
    const floorP95 = sortedPercentile(ws.map(criticalSeconds).sort((a, b) => a - b), 0.95);
    const sat = 12 / (ws.reduce((s, w) => s + workSeconds(w), 0) / ws.length);
    const at = [0.01, 0.3, 0.6, 0.9].map((load) => p95Bound(ws, supply, load * sat));
    expect(at[0]).toBeCloseTo(floorP95, 6);
    for (let i = 1; i < at.length; i++) expect(at[i] ?? 0).toBeGreaterThanOrEqual(at[i - 1] ?? Infinity);
    expect(at[3] ?? 0).toBeGreaterThan(floorP95);
    expect(p95Bound(ws, supply, 1.01 * sat)).toBe(Infinity);
  });
});

describe("the model against the simulator", () => {
  it("its saturation is above the simulator's, and its P95 never beats a measured policy's", () => {
    const s: Scenario = { instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: 150, rate: 0.3, sloScale: 2 };
    const f = scenarioFrontier(s, scenarioBaseSlo(s), undefined, { workflows: 150, window: 200, seed: 1, loads: [0.3 / 0.54], scales: [2, 5] });
    // bench/results/frontier: 0.540 wf/s against 0.481 measured by the ablation on 300 workflows.
    expect(f.saturation).toBeGreaterThan(0.481);
    expect(f.saturation).toBeLessThan(0.65);
    const hexgen = getPolicy("hexgen");
    if (hexgen === undefined) throw new Error("no hexgen");
    const run = runScenario(s, hexgen, 0.8, 1);
    const p95 = sortedPercentile(run.output.workflows.map((w) => w.latencyS).sort((a, b) => a - b), 0.95);
    const at = f.loads[0];
    if (at === undefined) throw new Error("no load point");
    expect(at.p95S).toBeGreaterThan(f.floorP95S);
    expect(at.p95S).toBeLessThan(p95);
    expect(at.meanStretch).toBeGreaterThan(1);
    const [at2, at5] = f.capacity;
    expect(at2?.capacity ?? 0).toBeLessThanOrEqual(at5?.capacity ?? 0);
    expect(at5?.capacity ?? Infinity).toBeLessThanOrEqual(f.saturation * (1 + 1e-6));
  });
});
