/**
 * The acceptance path of the Text-to-SQL workflow on real processes: the stack boots as `npm start` does
 * (emulated vLLM servers in Text-to-SQL mode, wrangler dev, the demo database loaded into local D1 and
 * registered as `demo`), and one request per question answers with SQL that runs and its rows.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DemoQuestionsSchema } from "../../scripts/lib/demo-data/questions-schema";
import { startStack, type Stack } from "../../scripts/lib/stack";
import { tenantHeaders } from "../../scripts/lib/replay";
import { openDemoDatabase } from "../../scripts/lib/text2sql-score";
import { runSqliteQuery } from "../../src/connector/sqlite-queries";

const questions = DemoQuestionsSchema.parse(JSON.parse(readFileSync(new URL("../../data/demo/questions.json", import.meta.url), "utf8")));
const AnswerSchema = z.object({
  status: z.string(),
  stages: z.array(z.object({ step: z.string() })),
  text2sql: z.object({
    sql: z.string(),
    rows: z.array(z.array(z.unknown())),
    selfCorrectionRounds: z.number().int(),
    candidates: z.array(z.object({ attempts: z.array(z.object({ status: z.string() })) })),
  }),
});
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ fleet: ["A100", "L40S"], timeScale: 50, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-t2s-")), quiet: process.env.HEXFLOW_E2E_LOGS === undefined, demoDatabase: true });
}, 120_000);
afterAll(async () => stack?.stop());

describe("text2sql on the local stack with the demo database", () => {
  it("answers demo questions in one request each with SQL that runs on the demo data, showing its rounds", async () => {
    const db = await openDemoDatabase();
    const asked = questions.slice(0, 4);
    const answers = await Promise.all(
      asked.map(async (q) => {
        const res = await fetch(`${stack.url}/v1/workflows`, {
          method: "POST",
          headers: tenantHeaders(stack, { prefer: "wait=60" }),
          body: JSON.stringify({ kind: "text2sql", database: "demo", question: q.question, candidates: 2 }),
        });
        expect(res.status).toBe(200);
        return AnswerSchema.parse(await res.json());
      }),
    );
    for (const a of answers) {
      expect(a.status).toBe("succeeded");
      expect(a.stages.map((s) => s.step)).toContain("generate_candidate_llama-agent");
      // The rows are those the SQL gives on the same data, read here independently of D1.
      expect(a.text2sql.rows).toEqual(runSqliteQuery(db, a.text2sql.sql, 100).rows);
      const revises = a.stages.filter((s) => s.step === "revise").length;
      expect(a.text2sql.selfCorrectionRounds).toBe(revises);
      for (const c of a.text2sql.candidates) expect(c.attempts.length).toBeLessThanOrEqual(4);
    }
  });
});
