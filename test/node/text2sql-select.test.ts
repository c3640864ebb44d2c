import { describe, expect, it } from "vitest";
import { selectWinner, type CandidateOutcome } from "../../src/core/text2sql/select";

const ran = { ok: true } as const;
const failed = (error: string) => ({ ok: false, error }) as const;

function outcome(index: number, verdicts: boolean[], reviseRounds = 0, execution: CandidateOutcome["execution"] = ran): CandidateOutcome {
  return { index, sql: `SELECT ${index}`, execution, reviseRounds, verdicts };
}

describe("selectWinner", () => {
  it("picks the candidate passing the most unit tests", () => {
    const r = selectWinner([outcome(0, [true, false, false]), outcome(1, [true, true, false], 3), outcome(2, [false, false, true])]);
    expect(r).toEqual({ ok: true, value: { index: 1, sql: "SELECT 1", passed: 2, reviseRounds: 3 } });
  });

  it("breaks a tie on passes by fewest revise rounds", () => {
    const r = selectWinner([outcome(0, [true, true], 2), outcome(1, [true, true], 1), outcome(2, [false, true], 0)]);
    expect(r.ok && r.value.index).toBe(1);
  });

  it("breaks a tie on passes and rounds by candidate index, whatever the input order", () => {
    const r = selectWinner([outcome(3, [true], 1), outcome(1, [true], 1), outcome(2, [true], 1)]);
    expect(r.ok && r.value.index).toBe(1);
  });

  it("never chooses a candidate whose SQL did not execute while another did", () => {
    const r = selectWinner([outcome(0, [true, true, true], 0, failed("no such table: x")), outcome(1, [false, false, false], 4)]);
    expect(r).toEqual({ ok: true, value: { index: 1, sql: "SELECT 1", passed: 0, reviseRounds: 4 } });
  });

  it("counts a candidate with no verdicts (evaluation failed) as passing none", () => {
    const r = selectWinner([outcome(0, [], 0), outcome(1, [true], 5)]);
    expect(r.ok && r.value.index).toBe(1);
  });

  it("fails with every candidate's last error when none executed", () => {
    const r = selectWinner([
      outcome(1, [true], 10, failed("only SELECT/WITH queries may run; found DELETE")),
      outcome(0, [], 10, failed("no such column: totl")),
    ]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("no_executable_candidate");
    expect(r.error.candidates).toEqual([
      { index: 0, error: "no such column: totl" },
      { index: 1, error: "only SELECT/WITH queries may run; found DELETE" },
    ]);
    expect(r.error.message).toContain("no such column: totl");
    expect(r.error.message).toContain("found DELETE");
  });

  it("fails when there are no candidates", () => {
    expect(selectWinner([])).toEqual({
      ok: false,
      error: { code: "no_executable_candidate", message: "there were no candidates", candidates: [] },
    });
  });
});
