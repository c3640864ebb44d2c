import { describe, expect, it } from "vitest";
import { getPolicy } from "../../src/core/policies";
import { REFERENCE_POOL, buildInstances } from "../../src/sim/cluster";
import { runScenario } from "../../src/sim/scenario";
import { tuneAlpha } from "../../src/sim/tuner";

// The tuner Worker will run the simulator on workerd: the pure layers must work there unchanged.
describe("scheduling core and simulator inside workerd", () => {
  it("simulates the reference pool and tunes α", () => {
    const policy = getPolicy("hexgen");
    expect(policy).toBeDefined();
    if (policy === undefined) return;
    const scenario = { instances: buildInstances([...REFERENCE_POOL]), engine: "vllm" as const, source: { kind: "synthetic" as const }, workflows: 40, rate: 0.2, sloScale: 5 };
    const run = runScenario(scenario, policy, 0.7, 1);
    expect(run.output.workflows).toHaveLength(40);
    expect(run.metrics.latency.p95).toBeGreaterThan(run.baseSloS * 0.5);
    const tuned = tuneAlpha(scenario, policy, { seeds: [2], refineStep: 0 });
    expect(tuned.curve).toHaveLength(21);
  });
});
