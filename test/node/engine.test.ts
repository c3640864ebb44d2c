import { describe, expect, it } from "vitest";
import { defaultCost, estimateSeconds } from "../../src/core/cost-model";
import { KV_READ_FACTOR_PER_TOKEN, defaultCapacity, parityKvTokens, type GpuType } from "../../src/core/gpu";
import { ParityEngine } from "../../src/sim/engine/parity";
import type { AdmissionSource, Engine, EngineCall } from "../../src/sim/engine/types";
import { VllmEngine } from "../../src/sim/engine/vllm";

function source(calls: EngineCall[]): AdmissionSource {
  const q = [...calls];
  return { peek: () => q[0], pop: () => q.shift() };
}

/** Runs an engine to completion; returns each call's finish time. */
function drain(engine: Engine, calls: EngineCall[]): Map<string, number> {
  const src = source(calls);
  const done = new Map<string, number>();
  let t = 0;
  for (let plan = engine.planStep(src); plan !== null; plan = engine.planStep(src)) {
    t += plan.durationS;
    for (const id of engine.finishStep()) done.set(id, t);
  }
  return done;
}

const kv = KV_READ_FACTOR_PER_TOKEN["llama-3.1-70b"];
const vllm = (gpu: GpuType, kvTokens?: number) =>
  new VllmEngine(defaultCost(gpu), { ...defaultCapacity(gpu), ...(kvTokens === undefined ? {} : { kvTokens }) }, kv);

describe("vllm engine timing", () => {
  it.each([
    ["A100", 306, 7],
    ["A6000", 12850, 864],
    ["L40S", 7007, 126],
  ] as const)("a lone call on %s takes the fitted profile's time (in %i, out %i)", (gpu, input, output) => {
    const t = drain(vllm(gpu), [{ id: "c", inputTokens: input, outputTokens: output }]).get("c");
    const profile = estimateSeconds(defaultCost(gpu), input, output);
    // Chunked prefill adds one decode-step time per extra 2048-token chunk, nothing else.
    const chunks = Math.ceil(input / 2048);
    expect(t).toBeDefined();
    // Within 3% of the profile (a 7k-token prompt is 4 chunks: 3 extra steps of 55 ms on 7 s).
    expect(Math.abs((t ?? 0) - profile) / profile).toBeLessThan(0.03);
    expect(t ?? 0).toBeCloseTo(profile + (chunks - 1) * defaultCost(gpu).decodeS + (output - 1) * defaultCost(gpu).prefillS, 6);
  });

  it("batches: 16 calls together finish far sooner than 16 in a row, each a little slower than alone", () => {
    const calls = Array.from({ length: 16 }, (_, i) => ({ id: `c${i}`, inputTokens: 1000, outputTokens: 200 }));
    const together = Math.max(...drain(vllm("A100"), calls).values());
    const alone = drain(vllm("A100"), [{ id: "x", inputTokens: 1000, outputTokens: 200 }]).get("x") ?? 0;
    expect(together).toBeLessThan(alone * 2);
    expect(together).toBeGreaterThan(alone * 1.05);
  });

  it("admits only what the KV cache holds and preempts when decodes outgrow it", () => {
    const engine = vllm("L40S", 16 * 100); // 100 blocks = 1,600 tokens
    const calls = Array.from({ length: 4 }, (_, i) => ({ id: `c${i}`, inputTokens: 500, outputTokens: 300 }));
    const src = source(calls);
    const first = engine.planStep(src);
    // 500 tokens = 32 blocks each: three fit, the fourth waits in our queue.
    expect(first?.admitted).toEqual(["c0", "c1", "c2"]);
    expect(src.peek()?.id).toBe("c3");
    engine.finishStep();
    let t = 0;
    const done = new Map<string, number>();
    for (let p = engine.planStep(src); p !== null; p = engine.planStep(src)) {
      t += p.durationS;
      for (const id of engine.finishStep()) done.set(id, t);
    }
    expect([...done.keys()].sort()).toEqual(["c0", "c1", "c2", "c3"]);
    expect(engine.stats().preemptions).toBeGreaterThan(0);
    expect(engine.stats().kvUsage).toBe(0);
  });

  it("says when a prompt can never fit", () => {
    expect(vllm("L40S").fits({ id: "big", inputTokens: 70_000, outputTokens: 1 })).toBe(false);
    expect(vllm("A100").fits({ id: "big", inputTokens: 70_000, outputTokens: 1 })).toBe(true);
  });
});

describe("vllm engine progress and abort", () => {
  it("lists exactly the sequences that got a token: decodes and completed prefills, not mid-prefill chunks", () => {
    const engine = vllm("L40S");
    // Budget 2048: step 1 = a's whole prompt + 1,948 of b's; step 2 = a decodes, b finishes its
    // prefill; step 3 = both decode.
    const src = source([
      { id: "a", inputTokens: 100, outputTokens: 5 },
      { id: "b", inputTokens: 3000, outputTokens: 5 },
    ]);
    const steps: string[][] = [];
    for (let i = 0; i < 3; i++) {
      expect(engine.planStep(src)).not.toBeNull();
      engine.finishStep();
      steps.push([...engine.producedLastStep()]);
    }
    expect(steps).toEqual([["a"], ["a", "b"], ["a", "b"]]);
  });

  it("reports every token of every call once, finishing step included", () => {
    const engine = vllm("L40S", 16 * 150); // small enough to preempt
    const calls = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, inputTokens: 500, outputTokens: 300 }));
    const src = source(calls);
    const count = new Map<string, number>();
    for (let p = engine.planStep(src); p !== null; p = engine.planStep(src)) {
      const finished = engine.finishStep();
      const produced = engine.producedLastStep();
      for (const id of produced) count.set(id, (count.get(id) ?? 0) + 1);
      for (const id of finished) expect(produced).toContain(id);
    }
    expect(engine.stats().preemptions).toBeGreaterThan(0);
    for (const c of calls) expect(count.get(c.id)).toBe(300);
  });

  it("abort frees the call's KV so a waiting call is admitted; unknown ids return false", () => {
    const engine = vllm("L40S", 16 * 100); // 100 blocks: one 1,000-token prompt (63 blocks) at a time
    const src = source([
      { id: "a", inputTokens: 1000, outputTokens: 50 },
      { id: "b", inputTokens: 1000, outputTokens: 50 },
    ]);
    expect(engine.planStep(src)?.admitted).toEqual(["a"]);
    engine.finishStep();
    expect(engine.planStep(src)?.admitted).toEqual([]);
    engine.finishStep();
    const before = engine.stats().kvUsage;
    expect(engine.abort("nope")).toBe(false);
    expect(engine.abort("a")).toBe(true);
    expect(engine.abort("a")).toBe(false);
    expect(engine.stats().kvUsage).toBeLessThan(before);
    expect(engine.stats().kvUsage).toBe(0);
    expect(engine.stats().running).toBe(0);
    expect(engine.planStep(src)?.admitted).toEqual(["b"]);
    engine.finishStep();
    expect(engine.producedLastStep()).toEqual(["b"]);
  });

  it("aborts a preempted sequence, which is then never resumed", () => {
    const engine = vllm("L40S", 16 * 100);
    const calls = Array.from({ length: 3 }, (_, i) => ({ id: `c${i}`, inputTokens: 500, outputTokens: 300 }));
    const src = source(calls);
    for (let p = engine.planStep(src); p !== null && engine.stats().waiting === 0; p = engine.planStep(src)) engine.finishStep();
    // The loop stops with a step planned: apply it first (abort is only allowed between steps).
    engine.finishStep();
    expect(engine.stats().waiting).toBeGreaterThan(0);
    // The latest-admitted sequence is the one preempted.
    expect(engine.abort("c2")).toBe(true);
    expect(engine.stats().waiting).toBe(0);
    const seen = new Set<string>();
    for (let p = engine.planStep(src); p !== null; p = engine.planStep(src)) {
      engine.finishStep();
      for (const id of engine.producedLastStep()) seen.add(id);
    }
    expect([...seen].sort()).toEqual(["c0", "c1"]);
    expect(engine.stats().kvUsage).toBe(0);
  });

  it("refuses to abort while a step is planned", () => {
    const engine = vllm("L40S");
    engine.planStep(source([{ id: "a", inputTokens: 100, outputTokens: 5 }]));
    expect(() => engine.abort("a")).toThrow(/between planStep and finishStep/);
  });
});

describe("parity engine (the authors' timing)", () => {
  it("a lone call takes exactly the profile's latency", () => {
    const e = new ParityEngine(defaultCost("A6000"), "A6000", parityKvTokens("A6000"));
    const t = drain(e, [{ id: "c", inputTokens: 5963, outputTokens: 79 }]).get("c") ?? 0;
    expect(t).toBeCloseTo(estimateSeconds(defaultCost("A6000"), 5963, 79), 9);
  });
  it("prefills one call at a time and decodes at a batch-independent step time", () => {
    const e = new ParityEngine(defaultCost("A100"), "A100", parityKvTokens("A100"));
    const calls = Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, inputTokens: 1000, outputTokens: 100 }));
    const done = drain(e, calls);
    const c = defaultCost("A100");
    const prefill = estimateSeconds(c, 1000, 100) - 100 * 0.035;
    // Eight prefills back to back, then 100 shared decode steps of 35 ms (plus the decode steps
    // interleaved before later prefills are admitted, which is none here: the queue admits first).
    expect(Math.max(...done.values())).toBeCloseTo(8 * prefill + 100 * 0.035, 6);
  });
});
