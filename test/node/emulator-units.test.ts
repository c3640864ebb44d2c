import { describe, expect, it } from "vitest";
import { defaultCost } from "../../src/core/cost-model";
import { KV_READ_FACTOR_PER_TOKEN, defaultCapacity } from "../../src/core/gpu";
import { createRng, uniformInt } from "../../src/core/rng";
import { parseEmulatorArgs } from "../../src/emulator/cli-args";
import { TokenTracker } from "../../src/emulator/token-tracker";
import { applyStop, chatPromptTokens, completionPromptTokens, syntheticTokens } from "../../src/emulator/text";
import type { EngineCall } from "../../src/sim/engine/types";
import { VllmEngine } from "../../src/sim/engine/vllm";

/** Runs the engine and the tracker side by side; returns, per call, the tokens it got in each step from its first on. */
function runBoth(calls: EngineCall[], kvTokens: number, arrivals: number[]): Map<string, number[]> {
  const cap = { ...defaultCapacity("L40S"), kvTokens };
  const engine = new VllmEngine(defaultCost("L40S"), cap, KV_READ_FACTOR_PER_TOKEN["llama-3.1-70b"]);
  const tracker = new TokenTracker(cap.maxBatchedTokens);
  const queue: EngineCall[] = [];
  const pending = [...calls];
  const source = {
    peek: () => queue[0],
    pop: () => {
      const c = queue.shift();
      if (c !== undefined) tracker.admit(c.id, c.inputTokens, c.outputTokens);
      return c;
    },
  };
  const perStep = new Map<string, number[]>();
  for (let step = 0; step < 100_000; step++) {
    while (pending.length > 0 && (arrivals[calls.length - pending.length] ?? 0) <= step) {
      const next = pending.shift();
      if (next !== undefined) queue.push(next);
    }
    const plan = engine.planStep(source);
    if (plan === null) {
      if (pending.length === 0) break;
      continue;
    }
    const produced = tracker.advance(new Set(engine.finishStep()));
    for (const [id, n] of produced) perStep.set(id, [...(perStep.get(id) ?? []), n]);
  }
  return perStep;
}

describe("token tracker", () => {
  it("follows the engine step for step when nothing is preempted", () => {
    const rng = createRng(3);
    for (let round = 0; round < 10; round++) {
      const calls = Array.from({ length: 1 + uniformInt(rng, 24) }, (_, i) => ({
        id: `r${round}c${i}`,
        inputTokens: 1 + uniformInt(rng, 6000),
        outputTokens: 1 + uniformInt(rng, 300),
      }));
      const arrivals = calls.map(() => uniformInt(rng, 200));
      arrivals.sort((a, b) => a - b);
      const got = runBoth(calls, 1_000_000, arrivals);
      for (const c of calls) {
        // Without preemption the engine emits exactly one token per step from the first to the last,
        // so a tracker ahead or behind would show a gap or a burst.
        expect(got.get(c.id)).toEqual(Array.from({ length: c.outputTokens }, () => 1));
      }
    }
  });

  it("keeps counts exact under preemption (only the spacing drifts)", () => {
    const calls = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, inputTokens: 500, outputTokens: 300 }));
    const got = runBoth(calls, 16 * 150, [0, 0, 0, 0, 0, 0]);
    for (const c of calls) expect((got.get(c.id) ?? []).reduce((a, b) => a + b, 0)).toBe(300);
  });

  it("hands back survivors with their context so far", () => {
    const t = new TokenTracker(2048);
    t.admit("a", 100, 10);
    t.admit("b", 3000, 10);
    // Step 1: a's whole prompt (first token) and 1,948 of b's. Step 2: a decodes, b's prefill ends.
    t.advance(new Set());
    t.advance(new Set());
    expect(t.drain()).toEqual([
      { id: "a", contextTokens: 102, remainingTokens: 8 },
      { id: "b", contextTokens: 3001, remainingTokens: 9 },
    ]);
  });
});

describe("emulator text", () => {
  it("estimates prompt tokens by the documented rule", () => {
    expect(completionPromptTokens("")).toBe(1);
    expect(completionPromptTokens("abcde")).toBe(3);
    expect(chatPromptTokens(["abcd", "efgh"])).toBe(1 + 3 + 2 * 4 + 2);
  });

  it("makes exactly the asked number of tokens, deterministically", () => {
    const a = syntheticTokens(1, "prompt", 50);
    expect(a).toHaveLength(50);
    expect(syntheticTokens(1, "prompt", 50)).toEqual(a);
    expect(syntheticTokens(2, "prompt", 50)).not.toEqual(a);
  });

  it("stops at the first token that completes a stop string, even across tokens", () => {
    const pieces = ["SELECT", " name", " FROM", " users"];
    expect(applyStop(pieces, ["FROM"], false)).toEqual({ tokens: 3, pieces: ["SELECT", " name", " "], stop: "FROM" });
    expect(applyStop(pieces, ["FROM"], true)?.pieces.join("")).toBe("SELECT name FROM");
    expect(applyStop(pieces, ["e F"], false)).toEqual({ tokens: 3, pieces: ["SELECT", " nam", ""], stop: "e F" });
    expect(applyStop(pieces, ["nope", ""], false)).toBeUndefined();
  });
});

describe("emulator CLI flags", () => {
  it("turns flags into start options", () => {
    expect(parseEmulatorArgs(["--gpu", "A100", "--port", "8001", "--time-scale", "20", "--seed", "3", "--served-model-name", "m", "--max-model-len", "8192", "--kv-tokens", "9000", "--host", "0.0.0.0"])).toEqual({
      ok: true,
      help: false,
      options: { gpu: "A100", model: "llama-3.1-70b", port: 8001, timeScale: 20, seed: 3, servedModelName: "m", maxModelLen: 8192, kvTokens: 9000, host: "0.0.0.0" },
    });
    expect(parseEmulatorArgs(["--help"])).toEqual({ ok: true, help: true });
  });

  it.each([
    [["--gpu", "TPU"], /^--gpu must be one of/],
    [[], /^--gpu must be one of/],
    [["--gpu", "A100", "--model", "gpt"], /^--model must be one of/],
    [["--gpu", "A100", "--time-scale", "0"], /^--time-scale must be a valid number/],
    [["--gpu", "A100", "--port", "70000"], /^--port must be/],
    [["--gpu", "A100", "--kv-tokens", "1.5"], /^--kv-tokens must be/],
    [["--gpu", "A100", "--bogus"], /^Unknown option '--bogus'/],
    [["--gpu", "A100", "extra"], /positional/],
  ])("rejects %j", (argv, message) => {
    const r = parseEmulatorArgs(argv);
    expect(r.ok).toBe(false);
    expect(r.ok ? "" : r.error).toMatch(message);
  });
});
