import { describe, expect, it } from "vitest";
import { createLeastLoaded } from "../../src/core/dispatch/least-loaded";
import { createRoundRobin } from "../../src/core/dispatch/round-robin";
import type { Candidate, DispatchInput } from "../../src/core/dispatch/types";
import { createWorkloadBalanced } from "../../src/core/dispatch/workload-balanced";
import { Dispatcher } from "../../src/core/dispatcher";
import { LoadTracker } from "../../src/core/load";
import { getPolicy, instantiatePolicy } from "../../src/core/policies";
import { createRng } from "../../src/core/rng";
import { call, inst } from "./helpers";

function candidates(rows: [gpu: Candidate["info"]["gpu"], load: number, estimate: number][]): Candidate[] {
  return rows.map(([gpu, load, estimate], order) => ({ info: inst(`i${order}`, gpu, 1), order, load, estimate }));
}
function input(cands: Candidate[], alpha: number, meanCallTime = 2, seed = 1): DispatchInput {
  return { call: call("w:0:0"), candidates: cands, meanCallTime, alpha, rng: createRng(seed), now: 0 };
}

describe("wb dispatch (hexflow default)", () => {
  const wb = createWorkloadBalanced({ parity: false });
  // Fastest is i0 (t̂ 2): ref. L_ref + ε = 4 + 2 = 6.
  // α = 0.5: i0 = 0.5*1 - 0.5*4/6 = 0.1667; i1 (t̂ 4, L 0) = 0.5*0.5 - 0 = 0.25; i2 (t̂ 3, L 3) = 0.5*(2/3) - 0.5*0.5 = 0.0833.
  const c = candidates([["A100", 4, 2], ["A6000", 0, 4], ["L40S", 3, 3]]);
  it("scores speed against load with hand-computed values", () => {
    expect(wb.pick(input(c, 0.5))).toBe(1);
    // α = 0.9: i0 = 0.9 - 0.1*4/6 = 0.833; i1 = 0.45; i2 = 0.6 - 0.05 = 0.55.
    expect(wb.pick(input(c, 0.9))).toBe(0);
    // α = 0: pure load, i1 has none.
    expect(wb.pick(input(c, 0))).toBe(1);
  });

  it("is defined on an idle pool and sends to the fastest", () => {
    expect(wb.pick(input(candidates([["A6000", 0, 4], ["A100", 0, 2]]), 0.5))).toBe(1);
  });

  it("breaks score ties by lower load, then by a seeded random choice", () => {
    // α = 0: equal scores need equal loads; two idle equal instances tie completely.
    const tie = candidates([["A100", 0, 2], ["A100", 0, 2], ["A100", 5, 2]]);
    const picks = new Set<number>();
    for (let seed = 1; seed <= 20; seed++) picks.add(wb.pick(input(tie, 0, 2, seed)));
    expect(picks).toEqual(new Set([0, 1]));
    // α = 1 with equal speed: scores tie whatever the load; the lighter instance wins.
    expect(wb.pick(input(candidates([["A100", 3, 2], ["A100", 1, 2]]), 1))).toBe(1);
  });

  it("scales load by the capacity factor", () => {
    const c2: Candidate[] = [
      { info: inst("a", "A100", 1, 1), order: 0, load: 4, estimate: 2 },
      { info: inst("b", "A100", 1, 0.25), order: 1, load: 8, estimate: 2 },
    ];
    // α = 0: a = -4/6, b = -(8*0.25)/6 = -2/6: b wins despite more raw load.
    expect(wb.pick(input(c2, 0))).toBe(1);
  });
});

describe("wb dispatch (parity with the authors' code)", () => {
  const wb = createWorkloadBalanced({ parity: true });
  it("sends to the first registered instance while its load is zero", () => {
    expect(wb.pick(input(candidates([["A100", 0, 2], ["A100", 0, 1]]), 0.5))).toBe(0);
  });
  it("uses the first instance as reference and halves A6000/L40S loads", () => {
    // ref = i0 (L 4, t̂ 2). α = 0.5: i0 = 0.5 - 0.5*1 = 0; i1 A6000 (L 6 -> 3, t̂ 4) = 0.25 - 0.5*0.75 = -0.125;
    // i2 A100 (L 1, t̂ 2) = 0.5 - 0.5*0.25 = 0.375.
    expect(wb.pick(input(candidates([["A100", 4, 2], ["A6000", 6, 4], ["A100", 1, 2]]), 0.5))).toBe(2);
    // α = 0: i1's halved load 3 beats i0's 4 though its raw load is higher.
    expect(wb.pick(input(candidates([["A100", 4, 2], ["A6000", 6, 4]]), 0))).toBe(1);
  });
  it("gives ties to the first registered instance (α = 1 sends everything to one A100)", () => {
    const c = candidates([["A100", 9, 2], ["A100", 1, 2], ["A6000", 0, 4]]);
    expect(wb.pick(input(c, 1))).toBe(0);
  });
});

describe("other dispatch plugins", () => {
  it("round-robin cycles in registration order", () => {
    const rr = createRoundRobin();
    const c = candidates([["A100", 0, 1], ["A6000", 0, 1], ["L40S", 0, 1]]);
    expect([0, 1, 2, 3].map(() => rr.pick(input(c, 0)))).toEqual([0, 1, 2, 0]);
  });
  it("least-loaded compares sampled instances on load + estimate", () => {
    const ll = createLeastLoaded(2);
    const c = candidates([["A100", 5, 2], ["A6000", 1, 4]]);
    // Two of two sampled: 7 vs 5.
    expect(ll.pick(input(c, 0))).toBe(1);
    // A full scan finds the minimum of load + t̂ wherever it is; two-choice sampling sometimes misses it.
    const wide = candidates([["A100", 5, 2], ["A6000", 9, 4], ["L40S", 9, 4], ["A100", 1, 2]]);
    expect(createLeastLoaded(Number.POSITIVE_INFINITY).pick(input(wide, 0))).toBe(3);
    const picks = new Set<number>();
    for (let seed = 1; seed <= 30; seed++) picks.add(ll.pick(input(wide, 0, 2, seed)));
    expect(picks.size).toBeGreaterThan(1);
  });
});

describe("Dispatcher", () => {
  it("adds each call's estimate to the chosen instance's outstanding load", () => {
    const policy = getPolicy("hexgen");
    if (policy === undefined) throw new Error("hexgen missing");
    const d = new Dispatcher([inst("fast", "A100", 1), inst("slow", "A6000", 2)], instantiatePolicy(policy), createRng(1), 0.5);
    // Idle pool, α = 0.5: fast scores 0.5, slow 0.25.
    const a1 = d.assign(call("w:0:0", { expectedOutputTokens: 3 }), 0);
    expect(a1).toEqual({ ok: true, instanceId: "fast", estimateS: 3 });
    // α = 0: 'fast' now carries 3 s (score -0.5*3/(3+4.5)), 'slow' none (score 0).
    d.alpha = 0;
    expect(d.assign(call("w:0:1", { expectedOutputTokens: 3 }), 0)).toEqual({ ok: true, instanceId: "slow", estimateS: 6 });
    d.started("fast", "w:0:0", 0);
    expect(d.loads.load("fast", 1)).toBeCloseTo(2, 12);
    d.finished("fast", "w:0:0");
    expect(d.loads.load("fast", 1)).toBe(0);
  });

  it("filters out instances that cannot hold the call, and says so when none can", () => {
    const policy = getPolicy("rr-fcfs");
    if (policy === undefined) throw new Error("rr-fcfs missing");
    const small = { ...inst("small", "L40S", 1), maxTokens: 1000 };
    const d = new Dispatcher([small, inst("big", "A100", 1)], instantiatePolicy(policy), createRng(1), 0);
    for (let i = 0; i < 3; i++) expect(d.assign(call(`w:0:${i}`, { inputTokens: 995, expectedOutputTokens: 10 }), 0)).toMatchObject({ ok: true, instanceId: "big" });
    expect(d.assign(call("w:1:0", { inputTokens: 900 }), 0)).toMatchObject({ ok: true, instanceId: "small" });
    const only = new Dispatcher([small], instantiatePolicy(policy), createRng(1), 0);
    expect(only.assign(call("w:2:0", { inputTokens: 5000 }), 0)).toMatchObject({ ok: false, error: { code: "no_instance" } });
  });

  it("reprices an instance in place: new estimates and step means, the round-robin cursor kept", () => {
    const rr = getPolicy("rr-fcfs");
    const hexgen = getPolicy("hexgen");
    if (rr === undefined || hexgen === undefined) throw new Error("policies missing");
    const d = new Dispatcher([inst("a", "A100", 1), inst("b", "A100", 1), inst("c", "A100", 1)], instantiatePolicy(rr), createRng(1), 0);
    const picks = [0, 1].map((i) => (d.assign(call(`w:0:${i}`), 0) as { instanceId: string }).instanceId);
    const before = d.estimator.meanStepTime("s");
    d.setCost("b", { overheadS: 0, prefillS: 0, decodeS: 4 });
    expect(d.estimator.meanStepTime("s")).toBeGreaterThan(before);
    // The third call goes where round robin was heading, not back to the first instance.
    expect([...picks, (d.assign(call("w:0:2"), 0) as { instanceId: string }).instanceId]).toEqual(["a", "b", "c"]);
    const w = new Dispatcher([inst("fast", "A100", 1), inst("slow", "A6000", 2)], instantiatePolicy(hexgen), createRng(1), 0.5);
    w.setCost("fast", { overheadS: 0, prefillS: 0, decodeS: 3 });
    // 'fast' calibrated to 3 s per token is now the slower one: an idle pool sends to 'slow', at its own price.
    expect(w.assign(call("w:1:0", { expectedOutputTokens: 3 }), 0)).toEqual({ ok: true, instanceId: "slow", estimateS: 6 });
  });
});

describe("issue 11 mechanisms", () => {
  it("loadAhead counts running work and only the queued calls that would run first", () => {
    const loads = new LoadTracker("outstanding");
    loads.assign("a", "run", 10, 0);
    loads.start("a", "run", 0);
    loads.assign("a", "urgent", 4, 5);
    loads.assign("a", "relaxed", 7, 50);
    loads.assign("a", "restored", 2); // no key: counts as ahead of everyone
    expect(loads.load("a", 3)).toBe(7 + 4 + 7 + 2);
    expect(loads.loadAhead("a", 1, 3)).toBe(7 + 2);
    expect(loads.loadAhead("a", 20, 3)).toBe(7 + 4 + 2);
    expect(loads.loadAhead("a", 50, 3)).toBe(loads.load("a", 3));
  });

  it("an urgent call takes the fast GPU that the load alone would steer it away from", () => {
    const wb = createWorkloadBalanced({ parity: false, urgency: 1 });
    // i0: A100, t̂ 2, busy (L 6); i1: L40S, t̂ 4, idle. At α = 0.3 load wins: i0 = 0.3 - 0.7*6/8 < i1 = 0.15.
    const cands = candidates([["A100", 6, 2], ["L40S", 0, 4]]);
    const at = (deadline: number, remaining: number): number => wb.pick({ ...input(cands, 0.3), call: call("w:0:0", { workflowDeadlineS: deadline, remainingAfterS: remaining }), now: 0 });
    expect(at(1000, 10)).toBe(1); // slack ratio (1000 - 12) / 12: relaxed, α stays 0.3
    expect(at(12, 10)).toBe(0); // no slack: α = 1, speed only
    expect(createWorkloadBalanced({ parity: false }).pick({ ...input(cands, 0.3), call: call("w:0:0", { workflowDeadlineS: 12, remainingAfterS: 10 }) })).toBe(1);
  });

  it("the dispatcher sees only the load ahead when the policy says so", () => {
    // a holds a lot of work due late; b a little due sooner than the newcomer (deadline 10).
    const pick = (name: string): unknown => {
      const spec = getPolicy(name);
      if (spec === undefined) throw new Error(`no ${name}`);
      const d = new Dispatcher([inst("a", "A100", 1), inst("b", "A100", 1)], instantiatePolicy(spec), createRng(1), 0.5);
      d.loads.assign("a", "late", 100, 1000);
      d.loads.assign("b", "soon", 5, 1);
      return d.assign(call("w:0:0", { deadlineS: 10 }), 0);
    };
    expect(pick("edf-ahead")).toMatchObject({ ok: true, instanceId: "a" });
    expect(pick("edf")).toMatchObject({ ok: true, instanceId: "b" });
  });
});
