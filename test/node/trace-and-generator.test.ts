import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHESS_STEP_MEANS, STEP, workflowFromTrace } from "../../src/core/chess";
import { createRng } from "../../src/core/rng";
import { mean } from "../../src/core/stats";
import { callCount } from "../../src/core/workflow";
import { syntheticWorkflow } from "../../src/sim/synthetic";
import { parseTrace } from "../../src/sim/trace";
import { NEEDS_SHARED, SHARED_DATA } from "./shared-data";

const entry = (steps: [string, number, number][]) => ({
  Text2SQLRequest: steps.map(([step, input_length, output_length]) => ({ step, input_length, output_length })),
});

describe("building a workflow from a trace entry", () => {
  it("groups consecutive candidates and consecutive evaluates; everything else is sequential", () => {
    const w = workflowFromTrace(
      entry([
        [STEP.retriever, 301, 26], [STEP.keywords, 649, 21], [STEP.retriever, 304, 5],
        [STEP.candidate, 11909, 663], [STEP.candidate, 8043, 439],
        [STEP.revise, 5859, 74], [STEP.revise, 5900, 80],
        [STEP.unitTester, 271, 6], [STEP.unitTest, 1106, 88], [STEP.unitTester, 275, 4],
        [STEP.evaluate, 958, 22], [STEP.evaluate, 959, 22], [STEP.evaluate, 968, 22],
        [STEP.unitTester, 278, 4],
      ]),
    );
    expect(w.stages.map((s) => [s.step, s.calls.length])).toEqual([
      [STEP.retriever, 1], [STEP.keywords, 1], [STEP.retriever, 1], [STEP.candidate, 2],
      [STEP.revise, 1], [STEP.revise, 1], [STEP.unitTester, 1], [STEP.unitTest, 1], [STEP.unitTester, 1],
      [STEP.evaluate, 3], [STEP.unitTester, 1],
    ]);
    expect(w.stages[3]?.calls.map((c) => c.inputTokens)).toEqual([11909, 8043]);
    expect(callCount(w)).toBe(14);
  });
});

describe("trace loader", () => {
  it("names the file, the entry and the field of a malformed trace", () => {
    const bad = JSON.stringify([entry([[STEP.retriever, 1, 1]]), { Text2SQLRequest: [{ step: "x", input_length: "12", output_length: 3 }] }]);
    const r = parseTrace(bad, "t.json");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/^t\.json: entry 1 field Text2SQLRequest\[0\]\.input_length: /);
  });
  it("rejects non-JSON, non-arrays and empty traces", () => {
    expect(parseTrace("{", "a.json")).toMatchObject({ ok: false, error: expect.stringMatching(/^a\.json: not valid JSON/) });
    expect(parseTrace("{}", "a.json")).toMatchObject({ ok: false, error: "a.json: expected a JSON array of workflows" });
    expect(parseTrace("[]", "a.json")).toMatchObject({ ok: false, error: "a.json: the trace has no entries" });
    expect(parseTrace(JSON.stringify([{ Text2SQLRequest: [] }]), "a.json").ok).toBe(false);
  });
  it.skipIf(SHARED_DATA === undefined)(`loads every reference trace (${NEEDS_SHARED})`, () => {
    for (const [f, n] of [["chess-trace1.json", 90], ["chess-trace2.json", 96], ["chess-trace3.json", 110], ["chess-bird-minidev50.json", 50]] as const) {
      const r = parseTrace(readFileSync(join(SHARED_DATA ?? "", "traces", f), "utf8"), f);
      expect(r.ok && r.value.length).toBe(n);
    }
  });
});

/**
 * Pooled reference statistics of chess-trace1..3 (step-stats.csv weighted by calls): calls per
 * workflow and mean input / output tokens. The test below checks these against the CSV when it is here.
 */
const REFERENCE: Record<string, { callsPerWorkflow: number; inMean: number; outMean: number }> = {
  [STEP.retriever]: { callsPerWorkflow: 4, inMean: 306.2, outMean: 7.4 },
  [STEP.keywords]: { callsPerWorkflow: 236 / 296, inMean: 682.6, outMean: 52.3 },
  [STEP.candidate]: { callsPerWorkflow: 2, inMean: 10916.9, outMean: 705.6 },
  [STEP.revise]: { callsPerWorkflow: 1306 / 296, inMean: 7006.9, outMean: 126.1 },
  [STEP.unitTester]: { callsPerWorkflow: 3, inMean: 274.7, outMean: 4.7 },
  [STEP.unitTest]: { callsPerWorkflow: 288 / 296, inMean: 1190.4, outMean: 102.4 },
  [STEP.evaluate]: { callsPerWorkflow: 1518 / 296, inMean: 1132.0, outMean: 30.2 },
};

describe("synthetic generator", () => {
  it("matches the traces' per-step call counts (±5%) and mean token lengths (±6%)", () => {
    const rng = createRng(7);
    const n = 4000;
    const calls = new Map<string, { in: number[]; out: number[] }>();
    for (let i = 0; i < n; i++) {
      for (const stage of syntheticWorkflow(rng).stages)
        for (const c of stage.calls) {
          const s = calls.get(c.step) ?? { in: [], out: [] };
          s.in.push(c.inputTokens);
          s.out.push(c.outputTokens);
          calls.set(c.step, s);
        }
    }
    for (const [step, ref] of Object.entries(REFERENCE)) {
      const got = calls.get(step);
      expect(got, step).toBeDefined();
      if (got === undefined) continue;
      expect(got.in.length / n / ref.callsPerWorkflow, `${step} calls`).toBeCloseTo(1, 1);
      expect(Math.abs(got.in.length / n / ref.callsPerWorkflow - 1), `${step} calls`).toBeLessThan(0.05);
      expect(Math.abs(mean(got.in) / ref.inMean - 1), `${step} input`).toBeLessThan(0.06);
      expect(Math.abs(mean(got.out) / ref.outMean - 1), `${step} output`).toBeLessThan(0.06);
    }
    // The scheduler's default step means are the same pooled numbers.
    expect(CHESS_STEP_MEANS[STEP.revise]?.inputTokens).toBeCloseTo(REFERENCE[STEP.revise]?.inMean ?? 0, 0);
  });

  it("makes 10-28 calls per workflow with the trace's stage shape", () => {
    const rng = createRng(3);
    for (let i = 0; i < 500; i++) {
      const w = syntheticWorkflow(rng);
      expect(callCount(w)).toBeGreaterThanOrEqual(10);
      expect(callCount(w)).toBeLessThanOrEqual(28);
      expect(w.stages.find((s) => s.step === STEP.candidate)?.calls).toHaveLength(2);
    }
  });

  it.skipIf(SHARED_DATA === undefined)(`uses reference numbers that agree with step-stats.csv (${NEEDS_SHARED})`, () => {
    const rows = readFileSync(join(SHARED_DATA ?? "", "traces/step-stats.csv"), "utf8").trim().split("\n").slice(1).map((l) => l.split(","));
    for (const [step, ref] of Object.entries(REFERENCE)) {
      const mine = rows.filter((r) => r[1] === step);
      const calls = mine.reduce((s, r) => s + Number(r[3]), 0);
      const queries = mine.reduce((s, r) => s + Number(r[2]), 0);
      const inMean = mine.reduce((s, r) => s + Number(r[3]) * Number(r[7]), 0) / calls;
      const outMean = mine.reduce((s, r) => s + Number(r[3]) * Number(r[10]), 0) / calls;
      expect(calls / queries).toBeCloseTo(ref.callsPerWorkflow, 2);
      expect(inMean / ref.inMean).toBeCloseTo(1, 2);
      expect(outMean / ref.outMean).toBeCloseTo(1, 2);
    }
  });
});
