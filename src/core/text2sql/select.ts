/**
 * Choosing the workflow's answer among the candidates once they are revised and evaluated. Executing at
 * all comes first: a query that never ran cannot be the answer while another one did.
 */

export interface CandidateOutcome {
  /** Position in the candidate stage; the last tie-break, so the result never depends on arrival order. */
  index: number;
  /** The candidate's final SQL, after its revise rounds. */
  sql: string;
  /** Whether that final SQL executed (an empty result counts as executed), else its last error. */
  execution: { ok: true } | { ok: false; error: string };
  reviseRounds: number;
  /** One verdict per unit test (true = passed); empty when its evaluation failed or never ran. */
  verdicts: readonly boolean[];
}

export interface Winner {
  index: number;
  sql: string;
  passed: number;
  reviseRounds: number;
}

export type SelectionResult =
  | { ok: true; value: Winner }
  | {
      ok: false;
      error: {
        code: "no_executable_candidate";
        message: string;
        /** Every candidate's last error, in index order. */
        candidates: { index: number; error: string }[];
      };
    };

const passedCount = (c: CandidateOutcome) => c.verdicts.filter((v) => v).length;

/** Most tests passed, then fewest revise rounds (less repaired, less likely to be patched into shape), then index. */
function better(a: CandidateOutcome, b: CandidateOutcome): boolean {
  const pa = passedCount(a);
  const pb = passedCount(b);
  if (pa !== pb) return pa > pb;
  if (a.reviseRounds !== b.reviseRounds) return a.reviseRounds < b.reviseRounds;
  return a.index < b.index;
}

export function selectWinner(outcomes: readonly CandidateOutcome[]): SelectionResult {
  let best: CandidateOutcome | undefined;
  for (const c of outcomes) {
    if (!c.execution.ok) continue;
    if (best === undefined || better(c, best)) best = c;
  }
  if (best !== undefined) {
    return { ok: true, value: { index: best.index, sql: best.sql, passed: passedCount(best), reviseRounds: best.reviseRounds } };
  }
  const candidates = [...outcomes]
    .sort((a, b) => a.index - b.index)
    .map((c) => ({ index: c.index, error: c.execution.ok ? "" : c.execution.error }));
  const message =
    candidates.length === 0
      ? "there were no candidates"
      : `no candidate's SQL executed: ${candidates.map((c) => `#${c.index}: ${c.error}`).join("; ")}`;
  return { ok: false, error: { code: "no_executable_candidate", message, candidates } };
}
