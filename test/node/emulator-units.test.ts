import { describe, expect, it } from "vitest";
import { parseEmulatorArgs } from "../../src/emulator/cli-args";
import { applyStop, chatPromptTokens, completionPromptTokens, syntheticTokens } from "../../src/emulator/text";

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
