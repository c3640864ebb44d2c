import { describe, expect, it } from "vitest";
import { STEP } from "../../src/core/chess";
import { getPolicy, type PolicySpec } from "../../src/core/policies";
import { toRecord, type InstanceRecord } from "../../src/core/pool";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { scenarioBaseSlo, type Scenario } from "../../src/sim/scenario";
import { rebuildWindow, type CallTraceRow, type WindowWorkflow, type WorkflowTraceRow } from "../../src/sim/trace-window";
import { tuneAlpha } from "../../src/sim/tuner";
import { decideAlpha, DEFAULT_TUNING_CONFIG, simInstance, type TuningConfig } from "../../src/sim/tuning-decision";
import { buildWorkload } from "../../src/sim/workload";

function hexgen(): Readonly<PolicySpec> {
  const p = getPolicy("hexgen");
  if (p === undefined) throw new Error("hexgen policy missing");
  return p;
}

/** The reference pool as the coordinator registers it (default costs and capacities). */
const POOL: InstanceRecord[] = REFERENCE_POOL.map((gpu, i) => toRecord({ id: `${gpu.toLowerCase()}-${i}`, url: "http://127.0.0.1:9", gpu, model: "llama-3.1-70b", timeScale: 1, capacityFactor: 1, requestTimeoutMs: 600_000 }, 0));

// A load where α matters on the reference pool (docs/benchmarks.md: 1 workflow/s is near capacity).
const N = 150;
const RATE = 1;
const SEED = 3;
const SLO_SCALE = 5;
const scenario: Scenario = { instances: buildInstances(REFERENCE_POOL), engine: "vllm", source: { kind: "synthetic" }, workflows: N, rate: RATE, sloScale: SLO_SCALE };
const sloS = SLO_SCALE * scenarioBaseSlo(scenario);
const window: WindowWorkflow[] = buildWorkload(scenario.source, N, RATE, SEED).map((w) => ({ ...w, sloS }));
const config: TuningConfig = { ...DEFAULT_TUNING_CONFIG, seeds: [SEED] };

describe("the tuning decision", () => {
  it("sees the registered pool as the simulator's reference pool", () => {
    expect(POOL.map(simInstance)).toEqual(scenario.instances);
  });

  it("picks the α the simulator prefers on the same window, and installs it when the gain is large", () => {
    const direct = tuneAlpha(scenario, hexgen(), { seeds: [SEED], refineStep: 0 });
    const worst = direct.curve.reduce((a, b) => (b.p95 > a.p95 ? b : a));
    const d = decideAlpha({ window, instances: POOL, policy: "hexgen", alpha: worst.alpha, config });
    expect(d.skipped).toBeUndefined();
    expect(d.bestAlpha).toBe(direct.alpha);
    expect(d.curve.map((p) => [p.alpha, p.p95S])).toEqual(direct.curve.map((p) => [p.alpha, p.p95]));
    expect(d.currentP95).toBe(worst.p95);
    expect(d.gain).toBeCloseTo((worst.p95 - d.bestP95) / worst.p95, 12);
    // The curve must not be flat, else this test says nothing about α.
    expect(d.gain).toBeGreaterThan(config.threshold);
    expect(d.install).toBe(true);
    for (const p of d.curve) expect(p.attainment).toBeGreaterThanOrEqual(0);
  });

  it("keeps α when the gain is below the threshold, or when the current α is already the best", () => {
    const first = decideAlpha({ window, instances: POOL, policy: "hexgen", alpha: 0, config });
    const huge = decideAlpha({ window, instances: POOL, policy: "hexgen", alpha: 0, config: { ...config, threshold: 10 } });
    expect(huge.install).toBe(false);
    expect(huge.bestAlpha).toBe(first.bestAlpha);
    const atBest = decideAlpha({ window, instances: POOL, policy: "hexgen", alpha: first.bestAlpha, config });
    expect(atBest).toMatchObject({ bestAlpha: first.bestAlpha, gain: 0, install: false });
  });

  it("simulates the pool's own policy: an urgency pool's α is tuned with its urgency rule, not with hexgen's plain WB", () => {
    // A tight SLO, where urgency moves calls (at scale 5 hardly any workflow runs short of slack).
    const tight = window.map((w) => ({ ...w, sloS: 1.5 * scenarioBaseSlo(scenario) }));
    const grid = { ...config, alphaGrid: [0.3, 0.6, 0.9] };
    const flow = decideAlpha({ window: tight, instances: POOL, policy: "hexgen-urgency", alpha: 0.3, config: grid });
    const gen = decideAlpha({ window: tight, instances: POOL, policy: "hexgen", alpha: 0.3, config: grid });
    expect(flow.skipped).toBeUndefined();
    expect(flow.curve.map((p) => p.alpha)).toEqual([0.3, 0.6, 0.9]);
    expect(flow.curve.map((p) => p.p95S)).not.toEqual(gen.curve.map((p) => p.p95S));
  });

  it("keeps the current α on a tie", () => {
    // One instance: every α dispatches identically, so the curve is flat.
    const one = POOL.slice(0, 1);
    const d = decideAlpha({ window: window.slice(0, 60), instances: one, policy: "hexgen", alpha: 0.35, config: { ...config, minWorkflows: 10 } });
    expect(d).toMatchObject({ bestAlpha: 0.35, gain: 0, install: false });
  });

  it("skips, and says why, on too few workflows, a policy without α, or no active instance", () => {
    expect(decideAlpha({ window: window.slice(0, 10), instances: POOL, policy: "hexgen", alpha: 0.7, config })).toMatchObject({ install: false, curve: [], skipped: "too few workflows (10 < 50)" });
    expect(decideAlpha({ window, instances: POOL, policy: "rr-fcfs", alpha: 0.7, config }).skipped).toMatch(/does not use α/);
    const drained = POOL.map((r) => ({ ...r, state: "draining" as const }));
    expect(decideAlpha({ window, instances: drained, policy: "hexgen", alpha: 0.7, config }).skipped).toMatch(/no active instance/);
  });
});

describe("rebuilding the window from trace rows", () => {
  it("groups calls by stage_index, orders by stage then call id, keeps arrivals and SLOs", () => {
    const workflows: WorkflowTraceRow[] = [
      { workflow_id: "w2", arrival_s: 105, slo_s: 40 },
      { workflow_id: "w1", arrival_s: 100, slo_s: 30 },
      { workflow_id: "w3", arrival_s: 101, slo_s: 30 },
    ];
    const calls: CallTraceRow[] = [
      { call_id: "w1-c2", workflow_id: "w1", stage_index: 1, step: STEP.candidate, input_tokens: 9000, output_tokens: 500 },
      { call_id: "w1-c1", workflow_id: "w1", stage_index: 1, step: STEP.candidate, input_tokens: 12000, output_tokens: null },
      { call_id: "w1-c0", workflow_id: "w1", stage_index: 0, step: STEP.keywords, input_tokens: 670, output_tokens: 45 },
      { call_id: "w2-a", workflow_id: "w2", stage_index: 0, step: "summarize", input_tokens: 100, output_tokens: 10 },
      { call_id: "w2-b", workflow_id: "w2", stage_index: 1, step: "answer", input_tokens: 200, output_tokens: 20 },
    ];
    const w = rebuildWindow(workflows, calls);
    expect(w.map((x) => [x.id, x.arrivalS, x.sloS])).toEqual([["w1", 0, 30], ["w2", 5, 40]]);
    const [w1, w2] = w;
    expect(w1?.spec.stages.map((s) => s.calls.map((c) => c.inputTokens))).toEqual([[670], [12000, 9000]]);
    expect(w1?.spec.template.length).toBeGreaterThan(2);
    expect(w1?.spec.stages[1]?.calls[0]?.outputTokens).toBeGreaterThan(0);
    expect(w2?.spec.template).toEqual(["summarize", "answer"]);
  });
});
