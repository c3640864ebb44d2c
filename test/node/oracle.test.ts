/** The clairvoyant release (sim/oracle.ts): measurement only, so its one job is to carry the truth exactly. */
import { describe, expect, it } from "vitest";
import { CHESS_STEP_MEANS } from "../../src/core/chess";
import { Estimator } from "../../src/core/estimator";
import { getPolicy } from "../../src/core/policies";
import { cursorPlanner } from "../../src/core/remaining";
import { completeCall, releaseNextStage, startWorkflow } from "../../src/core/workflow-run";
import { buildInstances, REFERENCE_POOL } from "../../src/sim/cluster";
import { clairvoyant } from "../../src/sim/oracle";
import { runScenario, type Scenario } from "../../src/sim/scenario";
import { buildWorkload } from "../../src/sim/workload";

const instances = buildInstances(REFERENCE_POOL);
const est = new Estimator(instances, CHESS_STEP_MEANS, "call");
const ctx = { planner: cursorPlanner, meanStepTime: (s: string) => est.meanStepTime(s), expectedOutput: (s: string) => est.expectedOutput(s) };
const trueSeconds = (c: { step: string; inputTokens: number; outputTokens: number }) => est.meanCallTime({ step: c.step, inputTokens: c.inputTokens, expectedOutputTokens: c.outputTokens });

describe("the clairvoyant release", () => {
  it("carries each call's true output and its workflow's true remaining work, stage after stage", () => {
    const [item] = buildWorkload({ kind: "synthetic" }, 1, 1, 7);
    if (item === undefined) throw new Error("no workflow");
    const w = startWorkflow(item.id, item.spec, 0, 300);
    for (let now = 10; ; now += 10) {
      const calls = releaseNextStage(w, ctx, now);
      if (calls.length === 0) break;
      const truth = clairvoyant(calls, w, est, now);
      const later = item.spec.stages.slice(w.stageIndex + 1);
      const after = later.reduce((sum, s) => sum + Math.max(...s.calls.map(trueSeconds)), 0);
      for (const [i, c] of truth.entries()) {
        expect(c.expectedOutputTokens).toBe(calls[i]?.outputTokens);
        expect(c.remainingAfterS).toBeCloseTo(after, 9);
        expect(c.deadlineS).toBeCloseTo(now + c.budgetS, 9);
      }
      // The last stage gets the whole remaining SLO.
      if (later.length === 0) expect(truth[0]?.budgetS).toBeCloseTo(300 - now, 9);
      for (const c of calls) completeCall(w, c.id, now);
    }
  });

  it("changes what a policy that reads estimates does, and nothing else about the run", () => {
    const hexgen = getPolicy("hexgen");
    if (hexgen === undefined) throw new Error("hexgen missing");
    const s: Scenario = { instances, engine: "vllm", source: { kind: "synthetic" }, workflows: 60, rate: 0.4, sloScale: 2 };
    const plain = runScenario(s, hexgen, 0.7, 1).output;
    const oracle = runScenario({ ...s, oracle: true }, hexgen, 0.7, 1).output;
    expect(oracle.calls).toBe(plain.calls);
    expect(oracle.workflows.map((r) => r.id).sort()).toEqual(plain.workflows.map((r) => r.id).sort());
    expect(oracle.workflows.map((r) => r.latencyS)).not.toEqual(plain.workflows.map((r) => r.latencyS));
  });
});
