import { describe, expect, it } from "vitest";
import { estimateSeconds } from "../../src/core/cost-model";
import { getPolicy, type PolicySpec } from "../../src/core/policies";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { latencyFloor, loneCallSeconds, saturatedCompletionRate } from "../../src/sim/limits";
import { runSimulation, type EngineKind } from "../../src/sim/simulator";
import { buildWorkload } from "../../src/sim/workload";

function policy(name: string): Readonly<PolicySpec> {
  const p = getPolicy(name);
  if (p === undefined) throw new Error(`no policy ${name}`);
  return p;
}

describe("physical limits", () => {
  it("times a lone call as the profile does, plus the engine's per-step terms", () => {
    const [a100, , a6000] = buildInstances([...REFERENCE_POOL]);
    if (a100 === undefined || a6000 === undefined) throw new Error("pool");
    // 1,000 prompt tokens fit one 2,048-token chunk: the profile, plus the one token each later decode step computes.
    expect(loneCallSeconds("vllm", a100, { inputTokens: 1000, outputTokens: 50 })).toBeCloseTo(estimateSeconds(a100.cost, 1000, 50) + 49 * a100.cost.prefillS, 9);
    // 5,000 take three chunks: two more decode-sized steps than the profile's single prefill.
    expect(loneCallSeconds("vllm", a6000, { inputTokens: 5000, outputTokens: 20 })).toBeCloseTo(estimateSeconds(a6000.cost, 5000, 20) + 2 * a6000.cost.decodeS + 19 * a6000.cost.prefillS, 9);
  });

  it("is a true floor: no workflow of any policy, at any load, beats its critical path", () => {
    const instances = buildInstances([...REFERENCE_POOL]);
    for (const [engine, rate] of [["vllm", 0.05], ["vllm", 0.6], ["parity", 0.3]] as [EngineKind, number][]) {
      const workload = buildWorkload({ kind: "synthetic" }, 60, rate, 7);
      const floor = latencyFloor(engine, buildInstances([...REFERENCE_POOL], engine), workload);
      for (const name of ["hexgen", "edf", "rr-fcfs"]) {
        const out = runSimulation({ policy: policy(name), alpha: 0.7, instances: engine === "vllm" ? instances : buildInstances([...REFERENCE_POOL], engine), engine, workload, sloS: 1e9, seed: 7 });
        let slack = Infinity;
        for (const w of out.workflows) slack = Math.min(slack, w.latencyS - (floor.perWorkflow.get(w.id) ?? Infinity));
        expect(slack, `${engine} ${name} at ${rate}/s`).toBeGreaterThanOrEqual(-1e-9);
        // Low load comes close to the floor: the bound is tight, not just true.
        if (rate < 0.1 && name !== "rr-fcfs") expect(slack, `${name} lone workflows`).toBeLessThan(5);
      }
    }
  });

  it("reads an overloaded run's completion rate from first arrival to last completion, blind to the order", () => {
    const results = Array.from({ length: 100 }, (_, i) => ({ id: `w${i}`, arrivalS: i / 10, finishS: 50 + 2 * i, latencyS: 50 + 2 * i - i / 10, calls: 1 }));
    expect(saturatedCompletionRate(results)).toBeCloseTo(100 / 248, 9);
    // Finishing them all in a burst at the end, over the same span, reads the same.
    const burst = results.map((r, i) => ({ ...r, finishS: i === 99 ? 248 : 240 + i / 100 }));
    expect(saturatedCompletionRate(burst)).toBeCloseTo(100 / 248, 9);
    expect(Number.isNaN(saturatedCompletionRate(results.slice(0, 4)))).toBe(true);
  });
});
