import { CHESS_FAN_OUT, CHESS_TEMPLATE, STEP } from "../core/chess";
import { normal, type Rng } from "../core/rng";
import { stagesFromCalls, type CallSpec, type WorkflowSpec } from "../core/workflow";

/** Log-normal token length, clamped to the range seen in the traces. */
export interface TokenDist {
  mu: number;
  sigma: number;
  min: number;
  max: number;
}

/**
 * Fitted to chess-trace1..3 pooled (296 workflows, 5,716 calls; `npm run fit:reference` reproduces
 * it from ../shared/data/traces): per step, the mean and standard deviation of ln(tokens), and the
 * observed min and max. The two candidate calls use different prompts, so each has its own fit.
 */
export const TOKEN_FITS: Readonly<Record<string, { in: TokenDist; out: TokenDist }>> = {
  [STEP.retriever]: { in: { mu: 5.7243, sigma: 0.0135, min: 301, max: 312 }, out: { mu: 1.7364, sigma: 0.5738, min: 4, max: 43 } },
  [STEP.keywords]: { in: { mu: 6.5252, sigma: 0.0376, min: 635, max: 750 }, out: { mu: 3.8851, sigma: 0.3975, min: 15, max: 119 } },
  "candidate#0": { in: { mu: 9.4582, sigma: 0.0766, min: 11745, max: 14131 }, out: { mu: 6.7425, sigma: 0.2099, min: 413, max: 1026 } },
  "candidate#1": { in: { mu: 9.0972, sigma: 0.1096, min: 7879, max: 10265 }, out: { mu: 6.2882, sigma: 0.181, min: 274, max: 772 } },
  [STEP.revise]: { in: { mu: 8.8431, sigma: 0.1525, min: 5701, max: 8904 }, out: { mu: 4.4702, sigma: 0.8655, min: 10, max: 1078 } },
  [STEP.unitTester]: { in: { mu: 5.6155, sigma: 0.0104, min: 271, max: 278 }, out: { mu: 1.5214, sigma: 0.1911, min: 4, max: 6 } },
  [STEP.unitTest]: { in: { mu: 7.0692, sigma: 0.1621, min: 724, max: 1553 }, out: { mu: 4.5507, sigma: 0.4162, min: 31, max: 245 } },
  [STEP.evaluate]: { in: { mu: 7.0004, sigma: 0.2457, min: 582, max: 1909 }, out: { mu: 3.2181, sigma: 0.4602, min: 22, max: 357 } },
};

/**
 * Observed call counts per workflow (same 296 workflows). Revise rounds and evaluate calls are drawn
 * jointly from their empirical table (they are correlated, and independent draws would exceed the
 * traces' 28 calls); zero evaluate calls means the workflow generated no unit test.
 */
export const COUNT_FITS = {
  keywordsProbability: 236 / 296,
  /** [revise rounds, evaluate calls, workflows]. */
  reviseEvaluateJoint: [
    [0, 4, 16], [0, 5, 10], [0, 6, 4], [0, 8, 2], [1, 0, 4], [1, 3, 2], [1, 4, 12], [1, 5, 14], [1, 6, 4],
    [2, 0, 4], [2, 3, 12], [2, 5, 2], [2, 6, 4], [3, 3, 2], [3, 4, 16], [3, 5, 8], [3, 6, 10], [4, 4, 16],
    [4, 6, 16], [5, 6, 32], [6, 5, 10], [6, 6, 2], [6, 11, 10], [7, 5, 22], [7, 6, 4], [8, 5, 10], [8, 6, 6],
    [9, 5, 10], [9, 6, 22], [10, 5, 10],
  ] as readonly (readonly [number, number, number])[],
  /** Evaluate prompts of one workflow differ by a few tokens (the same candidates, judged again). */
  evaluateJitter: 0.004,
};

export function drawTokens(rng: Rng, d: TokenDist): number {
  return Math.round(Math.min(d.max, Math.max(d.min, Math.exp(d.mu + d.sigma * normal(rng)))));
}

function drawJoint(rng: Rng): readonly [number, number, number] {
  const table = COUNT_FITS.reviseEvaluateJoint;
  let u = rng.next() * table.reduce((sum, row) => sum + row[2], 0);
  for (const row of table) {
    u -= row[2];
    if (u < 0) return row;
  }
  return table[table.length - 1] ?? [0, 0, 0];
}

function fit(key: string): { in: TokenDist; out: TokenDist } {
  const f = TOKEN_FITS[key];
  if (f === undefined) throw new Error(`synthetic: no fit for ${key}`);
  return f;
}

function call(rng: Rng, step: string, key: string = step, inputTokens?: number): CallSpec {
  const f = fit(key);
  return { step, inputTokens: inputTokens ?? drawTokens(rng, f.in), outputTokens: drawTokens(rng, f.out) };
}

/** One CHESS workflow with the call structure and token lengths of the reference traces. */
export function syntheticWorkflow(rng: Rng): WorkflowSpec {
  const calls: CallSpec[] = [call(rng, STEP.retriever)];
  calls.push(rng.next() < COUNT_FITS.keywordsProbability ? call(rng, STEP.keywords) : call(rng, STEP.retriever));
  for (let i = 0; i < 3; i++) calls.push(call(rng, STEP.retriever));
  calls.push(call(rng, STEP.candidate, "candidate#0"), call(rng, STEP.candidate, "candidate#1"));
  const [revises, evaluates] = drawJoint(rng);
  for (let i = 0; i < revises; i++) calls.push(call(rng, STEP.revise));
  calls.push(call(rng, STEP.unitTester));
  if (evaluates > 0) {
    calls.push(call(rng, STEP.unitTest), call(rng, STEP.unitTester));
    const base = drawTokens(rng, fit(STEP.evaluate).in);
    for (let i = 0; i < evaluates; i++) {
      calls.push(call(rng, STEP.evaluate, STEP.evaluate, Math.round(base * (1 + COUNT_FITS.evaluateJitter * normal(rng)))));
    }
  } else {
    calls.push(call(rng, STEP.unitTester));
  }
  calls.push(call(rng, STEP.unitTester));
  return { kind: "chess", stages: stagesFromCalls(calls, CHESS_FAN_OUT), template: [...CHESS_TEMPLATE] };
}
