/** Word matching between a question and schema names, and the per-prompt random generator. */
import { createRng, type Rng } from "../../core/rng";
import { QUESTION_MARKER } from "../../core/text2sql/format";
import { section, type DdlTable } from "./ddl";

/** FNV-1a of the seed and the prompt: equal prompts and seeds give equal answers. */
export function promptRng(seed: number, prompt: string): Rng {
  let h = (0x811c9dc5 ^ seed ^ 0x5a17) >>> 0;
  for (let i = 0; i < prompt.length; i++) {
    h ^= prompt.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return createRng(h);
}

export const wordsOf = (text: string): string[] =>
  text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 0);

/** The question's words, singular and plural forms both, for matching names. */
export function questionWords(prompt: string): Set<string> {
  const words = new Set<string>();
  for (const w of wordsOf(section(prompt, QUESTION_MARKER) ?? "")) {
    words.add(w);
    if (w.endsWith("s")) words.add(w.slice(0, -1));
    else words.add(`${w}s`);
  }
  return words;
}

const shares = (name: string, words: Set<string>) => wordsOf(name).some((w) => words.has(w));

export function matchingColumns(table: DdlTable, words: Set<string>): string[] {
  return table.columns.filter((c) => shares(c, words));
}

/** Tables ranked by how many words their name and columns share with the question; best first, stable. */
export function rankTables(tables: readonly DdlTable[], words: Set<string>): { table: DdlTable; score: number }[] {
  return tables
    .map((table, i) => ({ table, i, score: (shares(table.name, words) ? 2 : 0) + matchingColumns(table, words).length }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ table, score }) => ({ table, score }));
}
