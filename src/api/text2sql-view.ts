/**
 * The answer part of a text2sql workflow's view: the chosen SQL and its rows, every candidate with each
 * attempt's SQL and error (what self-correction did), the tests and verdicts, and the SQL time spent.
 */
import type { Text2SqlMeta } from "../objects/workflow-store";

export function text2sqlView(t: Text2SqlMeta) {
  const run = t.run;
  return {
    database: run.database,
    question: run.question,
    ...(run.hint === undefined ? {} : { hint: run.hint }),
    phase: run.phase,
    sql: run.answer?.sql ?? null,
    columns: run.answer?.columns ?? null,
    rows: run.answer?.rows ?? null,
    truncated: run.answer?.truncated ?? null,
    chosenCandidate: run.answer?.candidate ?? null,
    /** Stages of revise calls that ran; each candidate's own count is its attempts minus one. */
    selfCorrectionRounds: run.rounds,
    candidates: run.candidates.map((c) => {
      const last = c.attempts.at(-1);
      return {
        index: c.index,
        sql: last?.sql ?? null,
        status: last?.status ?? null,
        error: last?.error ?? null,
        reviseRounds: Math.max(0, c.attempts.length - 1),
        attempts: c.attempts,
        testsPassed: c.verdicts.filter((v) => v).length,
        verdicts: c.verdicts,
      };
    }),
    keywords: run.keywords,
    linkedTables: (run.linked ?? run.schema).tables.map((tb) => tb.name),
    tests: run.tests,
    notes: run.notes,
    config: run.config,
    sqlExecutions: t.executions,
    sqlMsTotal: t.executions.reduce((s, e) => s + e.elapsedMs, 0),
  };
}
