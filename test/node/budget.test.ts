import { describe, expect, it } from "vitest";
import { CHESS_TEMPLATE, STEP } from "../../src/core/chess";
import { createParitySharedPlanner, cursorPlanner, newPlan, stageBudget } from "../../src/core/remaining";
import { releaseNextStage, startWorkflow, completeCall, type ReleaseContext } from "../../src/core/workflow-run";
import type { WorkflowSpec } from "../../src/core/workflow";

describe("stage budget", () => {
  it("splits the remaining SLO in proportion to expected stage times", () => {
    // S = 100 s, 10 s elapsed, t̄(k) = 2, remaining 3 + 4 = 7: B = 90 * 2 / 9 = 20.
    expect(stageBudget(90, 2, 7)).toBeCloseTo(20, 12);
    // The last stage gets all that is left, and a late workflow a negative budget.
    expect(stageBudget(12, 5, 0)).toBeCloseTo(12, 12);
    expect(stageBudget(-4, 1, 1)).toBeCloseTo(-2, 12);
  });
});

describe("remaining-stage planners", () => {
  it("cursor planner drops skipped phases and unused revise rounds", () => {
    const plan = newPlan(CHESS_TEMPLATE);
    // No keyword call: the second retriever call skips the keywords entry.
    cursorPlanner.onRelease(plan, STEP.retriever);
    const afterSecond = cursorPlanner.onRelease(plan, STEP.retriever);
    expect(afterSecond[0]).toBe(STEP.retriever);
    expect(afterSecond).not.toContain(STEP.keywords);
    cursorPlanner.onRelease(plan, STEP.retriever);
    cursorPlanner.onRelease(plan, STEP.retriever);
    cursorPlanner.onRelease(plan, STEP.candidate);
    cursorPlanner.onRelease(plan, STEP.revise);
    // Self-correction ends after one round: the three unused rounds leave the plan.
    const afterTester = cursorPlanner.onRelease(plan, STEP.unitTester);
    expect(afterTester).toEqual([STEP.unitTest, STEP.unitTester, STEP.evaluate, STEP.unitTester]);
    // An unexpected extra step changes nothing.
    expect(cursorPlanner.onRelease(plan, STEP.revise)).toEqual(afterTester);
  });

  it("parity planner shares one list between workflows, as the authors' code does", () => {
    const planner = createParitySharedPlanner(CHESS_TEMPLATE);
    const a = newPlan(CHESS_TEMPLATE);
    const b = newPlan(CHESS_TEMPLATE);
    expect(planner.onRelease(a, STEP.retriever)).toHaveLength(14);
    // Workflow b sees the entry a removed: its first release leaves 13, not 14.
    expect(planner.onRelease(b, STEP.retriever)).toHaveLength(13);
    // Reaching unit_tester while revise is listed gives a private copy without revise.
    const own = planner.onRelease(a, STEP.unitTester);
    expect(own).not.toContain(STEP.revise);
    expect(planner.onRelease(b, STEP.keywords)).toContain(STEP.revise);
  });
});

describe("workflow run", () => {
  const spec: WorkflowSpec = {
    kind: "test",
    template: ["a", "b", "c"],
    stages: [
      { step: "a", calls: [{ step: "a", inputTokens: 10, outputTokens: 1 }] },
      { step: "b", calls: [{ step: "b", inputTokens: 10, outputTokens: 1 }, { step: "b", inputTokens: 20, outputTokens: 2 }] },
      { step: "c", calls: [{ step: "c", inputTokens: 10, outputTokens: 1, expectedOutputTokens: 9 }] },
    ],
  };
  const times: Record<string, number> = { a: 1, b: 2, c: 3 };
  const ctx: ReleaseContext = { planner: cursorPlanner, meanStepTime: (s) => times[s] ?? 0, expectedOutput: () => 5 };

  it("releases stages with hand-computed budgets and fans in", () => {
    const w = startWorkflow("w", spec, 100, 60);
    const s0 = releaseNextStage(w, ctx, 100);
    // B = 60 * 1 / (1 + 2 + 3) = 10.
    expect(s0.map((c) => [c.id, c.budgetS, c.deadlineS, c.expectedOutputTokens])).toEqual([["w:0:0", 10, 110, 5]]);
    expect(releaseNextStage(w, ctx, 101)).toEqual([]);
    expect(completeCall(w, "w:0:0", 106)).toBe("stage-done");
    const s1 = releaseNextStage(w, ctx, 106);
    // 6 s used: B = 54 * 2 / (2 + 3) = 21.6 for both calls of the fan-out stage.
    expect(s1.map((c) => c.budgetS)).toEqual([21.6, 21.6]);
    expect(s1[0]?.deadlineS).toBeCloseTo(127.6, 12);
    expect(completeCall(w, "w:1:1", 120)).toBe("stage-open");
    expect(completeCall(w, "w:1:1", 121)).toBe("unknown-call");
    expect(completeCall(w, "w:1:0", 130)).toBe("stage-done");
    const s2 = releaseNextStage(w, ctx, 130);
    // Last stage: everything left, 60 - 30 = 30; the caller's output hint wins over the step mean.
    expect(s2.map((c) => [c.budgetS, c.expectedOutputTokens])).toEqual([[30, 9]]);
    expect(completeCall(w, "w:2:0", 150)).toBe("workflow-done");
    expect(w.finishedAt).toBe(150);
  });
});
