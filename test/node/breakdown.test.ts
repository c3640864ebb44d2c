/** Where a workflow's time goes (sim/breakdown.ts): the four parts add up to its latency, and each moves with its cause. */
import { describe, expect, it } from "vitest";
import { getPolicy } from "../../src/core/policies";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { runScenario, type Scenario } from "../../src/sim/scenario";
import type { GpuType } from "../../src/core/gpu";

const policy = (name: string) => {
  const p = getPolicy(name);
  if (p === undefined) throw new Error(`no ${name}`);
  return p;
};
const scenario = (gpus: readonly GpuType[], rate: number): Scenario => ({ instances: buildInstances(gpus), engine: "vllm", source: { kind: "synthetic" }, workflows: 60, rate, sloScale: 2, breakdown: true });
const share = (ws: ReturnType<typeof runScenario>["output"]["workflows"], part: "waitS" | "batchS" | "gpuS") =>
  ws.reduce((s, w) => s + (w.breakdown?.[part] ?? 0), 0) / ws.reduce((s, w) => s + w.latencyS, 0);

describe("the latency breakdown", () => {
  it("adds up to every workflow's latency", () => {
    const r = runScenario(scenario(REFERENCE_POOL, 0.3), policy("hexgen"), 0.7, 1);
    expect(r.output.workflows).toHaveLength(60);
    for (const w of r.output.workflows) {
      const b = w.breakdown;
      if (b === undefined) throw new Error(`${w.id} has no breakdown`);
      expect(b.waitS + b.batchS + b.gpuS + b.floorS).toBeCloseTo(w.latencyS, 6);
      expect(b.waitS).toBeGreaterThanOrEqual(0);
      expect(b.gpuS).toBeGreaterThanOrEqual(-1e-9);
    }
  });

  it("charges nothing to placement on a pool of one GPU type, and queueing to round-robin under load", () => {
    const same = runScenario(scenario(["A100", "A100"], 0.2), policy("least-loaded"), 0.7, 2);
    expect(share(same.output.workflows, "gpuS")).toBe(0);
    const rr = runScenario(scenario(REFERENCE_POOL, 0.5), policy("rr-fcfs"), 0.7, 3);
    const hex = runScenario(scenario(REFERENCE_POOL, 0.5), policy("hexgen"), 0.7, 3);
    // Round-robin sends a quarter of the calls to each slow GPU: placement costs it more than hexgen.
    expect(share(rr.output.workflows, "gpuS")).toBeGreaterThan(share(hex.output.workflows, "gpuS"));
    expect(share(rr.output.workflows, "waitS") + share(rr.output.workflows, "batchS")).toBeGreaterThan(0.2);
  });

  it("is absent unless asked for", () => {
    const r = runScenario({ ...scenario(REFERENCE_POOL, 0.3), breakdown: false }, policy("hexgen"), 0.7, 1);
    expect(r.output.workflows.every((w) => w.breakdown === undefined)).toBe(true);
  });
});
