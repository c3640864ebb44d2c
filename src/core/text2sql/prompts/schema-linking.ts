/**
 * Table and column selection: from the whole schema, the tables and columns the query needs. Its result
 * shrinks the schema given to the candidate and revise calls (the largest prompts of the workflow).
 */
import type { Column, DatabaseSchema, Table } from "../../db-schema";
import { extractJson, joinPrompt, parsed, questionSection, schemaSection, unparseable, type ParseResult } from "../format";

/**
 * STEP has no entry for selection (the traces account it under the information retriever's calls), so the
 * task marker uses the name the retriever router offers for it; the emulator tells the two tasks apart by it.
 */
export const SCHEMA_SELECTION_STEP = "select_schema";

export interface SchemaLinkingInput {
  question: string;
  hint?: string;
  schema: DatabaseSchema;
  /** From the extract_keywords call; empty when it was skipped. */
  keywords: readonly string[];
}

/** Table name to column names, as the model spelled them. */
export interface SchemaSelection {
  tables: Record<string, string[]>;
}

export function buildSchemaLinkingPrompt(input: SchemaLinkingInput): string {
  const keywords = input.keywords.length === 0 ? "(none)" : input.keywords.join(", ");
  return joinPrompt(SCHEMA_SELECTION_STEP, [
    "Choose the tables and columns of the schema below that a SQL query answering the question needs: every " +
      "column it selects, filters, groups, orders or joins on. Include the key columns used to join two chosen " +
      "tables. Use names exactly as the schema spells them.",
    questionSection(input.question, input.hint),
    `### keywords\n${keywords}`,
    schemaSection(input.schema),
    "### answer format\nReply with one JSON object mapping each chosen table to its chosen columns, for example:\n" +
      '{"tables":{"orders":["id","store_id"],"stores":["id","city"]}}',
  ]);
}

const STEP_NAME = SCHEMA_SELECTION_STEP;

/** The selection as the model wrote it; anything but `{"tables":{name:[column...]}}` is an error. */
export function parseSchemaLinking(text: string): ParseResult<SchemaSelection> {
  const found = extractJson(text, "{", (v) => typeof v === "object" && v !== null && "tables" in v);
  if (typeof found !== "object" || found === null || !("tables" in found)) {
    return unparseable(STEP_NAME, 'no JSON object with a "tables" key in the answer');
  }
  const tables: unknown = found.tables;
  if (typeof tables !== "object" || tables === null || Array.isArray(tables)) {
    return unparseable(STEP_NAME, '"tables" is not an object of table name to column list');
  }
  const selection: Record<string, string[]> = {};
  for (const [table, columns] of Object.entries(tables)) {
    if (!Array.isArray(columns) || !columns.every((c): c is string => typeof c === "string")) {
      return unparseable(STEP_NAME, `the columns of "${table}" are not a list of names`);
    }
    selection[table] = columns;
  }
  if (Object.keys(selection).length === 0) return unparseable(STEP_NAME, "no table was selected");
  return parsed({ tables: selection });
}

export interface LinkedSchema {
  schema: DatabaseSchema;
  /** Selected names the schema does not have ("table" or "table.column"): dropped, reported for the log. */
  unknown: string[];
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The part of `schema` a selection names, in the schema's own order and spelling. Primary keys and
 * foreign-key columns of chosen tables stay even when not selected, because a query cannot join without
 * them; a table chosen with no columns keeps all of them, since the model named it without narrowing.
 */
export function linkedSchema(schema: DatabaseSchema, selection: SchemaSelection): LinkedSchema {
  const unknown: string[] = [];
  const tables: Table[] = [];
  const chosen = Object.entries(selection.tables);
  for (const [name] of chosen) {
    if (!schema.tables.some((t) => same(t.name, name))) unknown.push(name);
  }
  for (const table of schema.tables) {
    const picked = chosen.filter(([name]) => same(name, table.name)).flatMap(([, cols]) => cols);
    if (!chosen.some(([name]) => same(name, table.name))) continue;
    for (const c of picked) if (!table.columns.some((col) => same(col.name, c))) unknown.push(`${table.name}.${c}`);
    const keep = (col: Column) =>
      picked.length === 0 || col.primaryKey || col.references !== undefined || picked.some((c) => same(c, col.name));
    tables.push({ name: table.name, columns: table.columns.filter(keep) });
  }
  return { schema: { dialect: schema.dialect, tables }, unknown };
}
