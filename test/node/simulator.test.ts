import { describe, expect, it } from "vitest";
import { defaultCapacity, KV_READ_FACTOR_PER_TOKEN } from "../../src/core/gpu";
import { getPolicy, POLICY_NAMES, type PolicySpec } from "../../src/core/policies";
import { buildInstances, parseCluster, REFERENCE_POOL } from "../../src/sim/cluster";
import { VllmEngine } from "../../src/sim/engine/vllm";
import { runScenario, type Scenario } from "../../src/sim/scenario";
import { runSimulation } from "../../src/sim/simulator";
import { tuneAlpha } from "../../src/sim/tuner";
import { defaultCost } from "../../src/core/cost-model";

function policy(name: string): Readonly<PolicySpec> {
  const p = getPolicy(name);
  if (p === undefined) throw new Error(`no policy ${name}`);
  return p;
}

const reference = (over: Partial<Scenario> = {}): Scenario => ({
  instances: buildInstances([...REFERENCE_POOL]),
  engine: "vllm",
  source: { kind: "synthetic" },
  workflows: 150,
  rate: 0.2,
  sloScale: 5,
  ...over,
});

describe("cluster parsing", () => {
  it("accepts lists and counts, and names unknown GPUs", () => {
    expect(parseCluster("A100x2, L40S,a6000")).toEqual({ ok: true, value: ["A100", "A100", "L40S", "A6000"] });
    expect(parseCluster("A100,B200")).toMatchObject({ ok: false, error: expect.stringMatching(/unknown GPU "B200"/) });
    expect(parseCluster("")).toMatchObject({ ok: false });
  });
});

describe("simulator", () => {
  it("is deterministic: same seed, same results; another seed, other results", () => {
    const a = runScenario(reference(), policy("hexgen"), 0.5, 4);
    const b = runScenario(reference(), policy("hexgen"), 0.5, 4);
    const c = runScenario(reference(), policy("hexgen"), 0.5, 5);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a.metrics)).not.toBe(JSON.stringify(c.metrics));
  });

  it.each(POLICY_NAMES)("finishes every workflow exactly once under %s, in both engines", (name) => {
    for (const engine of ["vllm", "parity"] as const) {
      const s = reference({ engine, instances: buildInstances([...REFERENCE_POOL], engine), workflows: 60 });
      const run = runScenario(s, policy(name), 0.5, 1);
      expect(new Set(run.output.workflows.map((w) => w.id)).size).toBe(60);
      expect(run.output.calls).toBe(run.output.workflows.reduce((n, w) => n + w.calls, 0));
      for (const w of run.output.workflows) expect(w.latencyS).toBeGreaterThan(0);
    }
  });

  it("times a lone sequential workflow as the sum of its calls on the engine", () => {
    const instances = buildInstances(["A100"]);
    const calls = [
      { step: "Information Retriever", inputTokens: 301, outputTokens: 26 },
      { step: "revise", inputTokens: 6000, outputTokens: 90 },
      { step: "unit_tester", inputTokens: 275, outputTokens: 4 },
    ];
    const spec = { kind: "chess", template: [], stages: calls.map((c) => ({ step: c.step, calls: [c] })) };
    const out = runSimulation({ policy: policy("hexgen"), alpha: 0.5, instances, engine: "vllm", workload: [{ id: "w", arrivalS: 3, spec }], sloS: 100, seed: 1 });
    let expected = 0;
    for (const c of calls) {
      const e = new VllmEngine(defaultCost("A100"), defaultCapacity("A100"), KV_READ_FACTOR_PER_TOKEN["llama-3.1-70b"]);
      const src = { peek: () => ({ id: "x", ...c }), pop: () => ({ id: "x", ...c }) };
      let taken = false;
      const once = { peek: () => (taken ? undefined : src.peek()), pop: () => { taken = true; return src.pop(); } };
      for (let p = e.planStep(once); p !== null; p = e.planStep(once)) {
        expected += p.durationS;
        e.finishStep();
      }
    }
    expect(out.workflows[0]?.latencyS).toBeCloseTo(expected, 9);
    expect(out.workflows[0]?.arrivalS).toBe(3);
  });

  it("hexgen beats round-robin + FCFS on P95 on the reference pool (3 seeds)", () => {
    for (const seed of [1, 2, 3]) {
      const hex = runScenario(reference(), policy("hexgen"), 0.6, seed);
      const rr = runScenario(reference(), policy("rr-fcfs"), 0, seed);
      expect(hex.metrics.latency.p95).toBeLessThan(rr.metrics.latency.p95);
    }
  });
});

describe("alpha tuner", () => {
  it("sweeps a 0.05 grid plus a refinement and returns the best point of its curve", () => {
    const r = tuneAlpha(reference({ workflows: 80 }), policy("hexgen"), { seeds: [1] });
    const grid = r.curve.filter((p) => Math.abs(p.alpha * 20 - Math.round(p.alpha * 20)) < 1e-9);
    expect(grid).toHaveLength(21);
    expect(r.curve.length).toBeGreaterThan(21);
    const best = Math.min(...r.curve.map((p) => p.p95));
    expect(r.curve.find((p) => p.alpha === r.alpha)?.p95).toBe(best);
    expect(r.simulations).toBe(r.curve.length);
  });

  it("optimises SLO attainment when asked", () => {
    const r = tuneAlpha(reference({ workflows: 80, rate: 0.4 }), policy("hexgen"), { seeds: [1], objective: { kind: "attainment", sloScale: 2 }, refineStep: 0 });
    const best = Math.max(...r.curve.map((p) => p.attainment));
    expect(r.curve.find((p) => p.alpha === r.alpha)?.attainment).toBe(best);
  });
});
