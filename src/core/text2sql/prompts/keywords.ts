/**
 * The extract_keywords call: the terms of the question that schema linking searches for (entity names,
 * literal values, column-like phrases). Its answer is a JSON array of strings.
 */
import { STEP } from "../../chess";
import { extractJson, joinPrompt, parsed, questionSection, unparseable, type ParseResult } from "../format";

export interface KeywordsInput {
  question: string;
  hint?: string;
}

export function buildKeywordsPrompt(input: KeywordsInput): string {
  return joinPrompt(STEP.keywords, [
    "List the keywords of the question below that a database search needs in order to answer it: names of " +
      "entities and attributes (for example 'store', 'order date'), literal values exactly as written (names, " +
      "numbers, dates, quoted strings), and any terms the hint defines. Leave out filler words and SQL words.",
    questionSection(input.question, input.hint),
    "### answer format\nReply with one JSON array of strings and nothing else, for example:\n" +
      '["store", "Berlin", "order date", "2024"]',
  ]);
}

/** The keywords as written, trimmed and de-duplicated; an answer with no JSON array of strings is an error. */
export function parseKeywords(text: string): ParseResult<string[]> {
  const found = extractJson(text, "[");
  if (!Array.isArray(found)) return unparseable(STEP.keywords, "no JSON array of strings in the answer");
  const keywords: string[] = [];
  for (const item of found) {
    if (typeof item !== "string") return unparseable(STEP.keywords, `the array holds a non-string: ${JSON.stringify(item)}`);
    const k = item.trim();
    if (k !== "" && !keywords.includes(k)) keywords.push(k);
  }
  return parsed(keywords);
}
