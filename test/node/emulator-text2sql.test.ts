import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { STEP } from "../../src/core/chess";
import type { DatabaseSchema } from "../../src/core/db-schema";
import { buildCandidatePrompt, parseCandidate } from "../../src/core/text2sql/prompts/candidate";
import { buildEvaluatePrompt, parseEvaluation } from "../../src/core/text2sql/prompts/evaluate";
import { buildKeywordsPrompt, parseKeywords } from "../../src/core/text2sql/prompts/keywords";
import { buildRevisePrompt, parseRevise } from "../../src/core/text2sql/prompts/revise";
import { buildRouterPrompt, parseRouter, RETRIEVER_TOOLS, UNIT_TESTER_TOOLS } from "../../src/core/text2sql/prompts/router";
import { buildSchemaLinkingPrompt, parseSchemaLinking } from "../../src/core/text2sql/prompts/schema-linking";
import { buildUnitTestPrompt, parseUnitTests } from "../../src/core/text2sql/prompts/unit-test";
import { startEmulator, type EmulatorHandle } from "../../src/emulator";
import { MODEL, post } from "./emulator-client";

const col = (name: string, primaryKey = false) => ({ name, type: primaryKey ? "INTEGER" : "TEXT", primaryKey, nullable: !primaryKey });
const schema: DatabaseSchema = {
  dialect: "sqlite",
  tables: [
    { name: "stores", columns: [col("id", true), col("city"), col("name")] },
    { name: "orders", columns: [col("id", true), { ...col("store_id"), references: { table: "stores", column: "id" } }, col("order_date"), col("total")] },
    { name: "Order Items", columns: [col("id", true), col("order_id"), col("select")] },
  ],
};
const NAMES = new Set(schema.tables.flatMap((t) => [t.name, ...t.columns.map((c) => c.name)]).map((n) => n.toLowerCase()));
const SQL_WORDS = new Set(["select", "from", "limit", "where"]);
const questions = ["Which city has the stores with the highest order total?", "List the order date of every order in Berlin", "How many items?"];

const emus: Record<string, EmulatorHandle> = {};
beforeAll(async () => {
  emus.base = await startEmulator({ gpu: "A100", timeScale: 500, seed: 3 });
  emus.right = await startEmulator({ gpu: "A100", timeScale: 500, seed: 3, sqlErrorRate: 0 });
  emus.wrong = await startEmulator({ gpu: "A100", timeScale: 500, seed: 3, sqlErrorRate: 1 });
  emus.other = await startEmulator({ gpu: "A100", timeScale: 500, seed: 4 });
});
afterAll(() => Promise.all(Object.values(emus).map((e) => e.close())));

const Completion = z.object({ choices: z.array(z.object({ text: z.string(), finish_reason: z.string() })), usage: z.object({ completion_tokens: z.number() }) });
const Chat = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })) });

async function complete(emu: EmulatorHandle, prompt: string, maxTokens = 1000): Promise<z.infer<typeof Completion>> {
  const res = await post(`${emu.url}/v1/completions`, { model: MODEL, prompt, max_tokens: maxTokens });
  expect(res.status).toBe(200);
  return Completion.parse(await res.json());
}
const answer = async (emu: EmulatorHandle, prompt: string) => (await complete(emu, prompt)).choices[0]?.text ?? "";

/** The identifiers a SELECT names, unquoted and lower-cased, without SQL words, numbers and string literals. */
function identifiers(sql: string): string[] {
  const names = [...sql.replace(/'[^']*'/g, "").matchAll(/"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => (m[1] ?? m[2] ?? "").toLowerCase());
  return names.filter((n) => !SQL_WORDS.has(n));
}

describe("emulator: Text-to-SQL answers", () => {
  it("answers router prompts with the next tool in order, then done", async () => {
    for (const [agent, tools] of [[STEP.retriever, RETRIEVER_TOOLS], [STEP.unitTester, UNIT_TESTER_TOOLS]] as const) {
      const done: string[] = [];
      for (const tool of [...tools.map((t) => t.name), "done"]) {
        const text = await answer(emus.base!, buildRouterPrompt({ agent, question: questions[0]!, tools, done }));
        expect(parseRouter(text, agent, tools)).toEqual({ ok: true, value: { next: tool } });
        done.push(tool);
      }
    }
  });

  it("gives keywords from the question and a schema selection the parser reads", async () => {
    for (const question of questions) {
      const kw = parseKeywords(await answer(emus.base!, buildKeywordsPrompt({ question })));
      expect(kw.ok).toBe(true);
      if (kw.ok) {
        expect(kw.value.length).toBeGreaterThan(0);
        for (const k of kw.value) expect(question.toLowerCase()).toContain(k);
      }
      const sel = parseSchemaLinking(await answer(emus.base!, buildSchemaLinkingPrompt({ question, schema, keywords: [] })));
      expect(sel.ok).toBe(true);
      if (sel.ok) {
        const tables = Object.keys(sel.value.tables);
        expect(tables.length).toBeGreaterThanOrEqual(1);
        expect(tables.length).toBeLessThanOrEqual(3);
        for (const t of tables) expect(schema.tables.map((x) => x.name)).toContain(t);
      }
    }
  });

  it("writes candidate SQL over the schema only, after reasoning that makes the call as long as a traced candidate", async () => {
    for (const question of questions) {
      const res = await complete(emus.right!, buildCandidatePrompt({ question, schema }));
      const text = res.choices[0]?.text ?? "";
      // The first candidate's output lengths in the traces run from 413 to 1,026 tokens (TOKEN_FITS); max_tokens is 1,000.
      expect(res.usage.completion_tokens).toBeGreaterThanOrEqual(413);
      expect(res.usage.completion_tokens).toBeLessThanOrEqual(1000);
      expect(text.trimEnd().endsWith("```")).toBe(true);
      expect(res.choices[0]?.finish_reason).toBe("stop");
      const sql = parseCandidate(text);
      expect(sql.ok).toBe(true);
      if (!sql.ok) continue;
      expect(sql.value).toMatch(/^SELECT /);
      expect(sql.value).not.toMatch(/WHERE/);
      for (const name of identifiers(sql.value)) expect(NAMES).toContain(name);
    }
  });

  it("writes wrong SQL at error rate 1 (a missing column or an impossible filter), and parseable revisions", async () => {
    for (const question of questions) {
      const sql = parseCandidate(await answer(emus.wrong!, buildCandidatePrompt({ question, schema })));
      expect(sql.ok).toBe(true);
      if (sql.ok) expect(identifiers(sql.value).some((n) => !NAMES.has(n)) || /WHERE .* = '/.test(sql.value)).toBe(true);
      const revised = parseRevise(
        await answer(emus.base!, buildRevisePrompt({ question, schema, sql: "SELECT nosuch_col FROM stores", problem: { kind: "error", message: "no such column" } })),
      );
      expect(revised.ok).toBe(true);
    }
  });

  it("writes three unit tests and one verdict per test", async () => {
    const candidates = [{ sql: "SELECT city FROM stores", result: "Berlin" }];
    const tests = parseUnitTests(await answer(emus.base!, buildUnitTestPrompt({ question: questions[0]!, schema, candidates, count: 3 })));
    expect(tests.ok && tests.value.length).toBe(3);
    const list = tests.ok ? tests.value : [];
    const verdicts = parseEvaluation(await answer(emus.base!, buildEvaluatePrompt({ question: questions[0]!, schema, candidate: candidates[0]!, tests: list })), 3);
    expect(verdicts.ok && verdicts.value.length).toBe(3);
  });

  it("answers chat prompts too, and the same prompt and seed give the same answer", async () => {
    const prompt = buildCandidatePrompt({ question: questions[1]!, schema });
    const first = await answer(emus.base!, prompt);
    expect(await answer(emus.base!, prompt)).toBe(first);
    const res = await post(`${emus.base!.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: "user", content: prompt }] });
    const chat = Chat.parse(await res.json()).choices[0]?.message.content ?? "";
    expect(chat).toBe(first);
    const answers = await Promise.all(questions.map((q) => answer(emus.other!, buildCandidatePrompt({ question: q, schema }))));
    for (const a of answers) expect(parseCandidate(a).ok).toBe(true);
  });

  it("caps the answer at max_tokens", async () => {
    const res = await complete(emus.base!, buildUnitTestPrompt({ question: questions[0]!, schema, candidates: [], count: 3 }), 5);
    expect(res.usage.completion_tokens).toBe(5);
    expect(res.choices[0]?.finish_reason).toBe("length");
  });
});
