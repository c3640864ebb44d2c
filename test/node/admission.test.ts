import { describe, expect, it } from "vitest";
import { canAdmit, kvClaim } from "../../src/core/admission";

const call = (inputTokens: number, expectedOutputTokens: number) => ({ inputTokens, expectedOutputTokens });
const limits = { maxConcurrency: 3, kvTokens: 10_000 };

describe("admission to a vLLM server", () => {
  it("claims the prompt plus the expected output, rounded up", () => {
    expect(kvClaim(call(1000, 20.2))).toBe(1021);
  });

  it("admits while the claims fit the KV cache and the count allows", () => {
    expect(canAdmit({ calls: 1, tokens: 4000 }, call(5000, 900), limits)).toBe(true);
    expect(canAdmit({ calls: 1, tokens: 4000 }, call(5000, 1001), limits)).toBe(false);
    expect(canAdmit({ calls: 3, tokens: 10 }, call(10, 1), limits)).toBe(false);
  });

  it("always lets an idle server take one call, even one larger than its budget", () => {
    expect(canAdmit({ calls: 0, tokens: 0 }, call(50_000, 10), limits)).toBe(true);
  });
});
