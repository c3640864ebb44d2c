/**
 * The shape of data/demo/questions.json: English questions about the Velo & Co demo database, each with
 * a gold SQL answer for SQLite / D1. The schema is the type; every reader of the file parses it here.
 */
import { z } from "zod";

/** One read-only statement: it starts with SELECT or WITH and has no second statement after a semicolon. */
const readOnlySelect = z
  .string()
  .min(1)
  .refine((sql) => /^\s*(SELECT|WITH)\b/i.test(sql), "gold_sql must start with SELECT or WITH")
  .refine((sql) => !/;\s*\S/.test(sql), "gold_sql must be a single statement");

export const DemoQuestionSchema = z.strictObject({
  id: z.string().regex(/^q\d{2}$/, "id looks like q01"),
  question: z.string().min(10),
  difficulty: z.enum(["easy", "medium", "hard"]),
  gold_sql: readOnlySelect,
  /** Every database table the gold SQL reads (CTE names excluded). */
  tables: z.array(z.string().min(1)).min(1),
});

export const DemoQuestionsSchema = z
  .array(DemoQuestionSchema)
  .min(1)
  .refine((qs) => new Set(qs.map((q) => q.id)).size === qs.length, "question ids must be unique");

export type DemoQuestion = z.infer<typeof DemoQuestionSchema>;
export type Difficulty = DemoQuestion["difficulty"];
