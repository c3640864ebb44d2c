/**
 * Shared text conventions of the Text-to-SQL prompts and their parsers: the markers the emulator keys on,
 * the result type every parser returns, and tolerant extraction of fenced blocks and JSON from model prose.
 */
import type { DatabaseSchema } from "../db-schema";
import { schemaToDdl } from "../db-schema";

/** First line of every prompt, followed by the step name (a STEP value): the emulator recognises the task by it. */
export const TASK_MARKER = "### hexflow-task:";
/** Heading of the section holding the schema as CREATE TABLE text; the emulator reads the schema after it. */
export const SCHEMA_MARKER = "### schema";
export const QUESTION_MARKER = "### question";

export type ParseErrorCode = "unparseable" | "empty_statement" | "multiple_statements" | "not_read_only";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: { code: ParseErrorCode; message: string } };

export const parsed = <T>(value: T): ParseResult<T> => ({ ok: true, value });

/** The one failure shape of every parser; the message names the step so a log line says which call went wrong. */
export function unparseable<T>(step: string, message: string): ParseResult<T> {
  return { ok: false, error: { code: "unparseable", message: `${step}: ${message}` } };
}

export const taskLine = (step: string): string => `${TASK_MARKER} ${step}`;

/** The marker alone on its line, then only DDL up to the next blank-line-separated `###` heading: easy to cut out. */
export function schemaSection(schema: DatabaseSchema): string {
  return `${SCHEMA_MARKER}\n${schemaToDdl(schema)}`;
}

/** The question, and the user's hint when there is one (BIRD-style evidence), as one section. */
export function questionSection(question: string, hint?: string): string {
  const lines = [QUESTION_MARKER, question.trim()];
  if (hint !== undefined && hint.trim() !== "") lines.push("", `Hint: ${hint.trim()}`);
  return lines.join("\n");
}

/** Sections separated by a blank line; the task marker is always the first line. */
export function joinPrompt(step: string, sections: readonly string[]): string {
  return [taskLine(step), ...sections].join("\n\n") + "\n";
}

export interface FencedBlock {
  /** The info string's first word, lower-cased ("sql" for ```SQL); "" when the fence has none. */
  lang: string;
  body: string;
  /** False when the answer ended before the closing fence (a truncated or sloppy answer). */
  closed: boolean;
}

/** Wraps text in a fence that its own content cannot close. */
export function fence(lang: string, body: string): string {
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${body}\n${ticks}`;
}

/** Every fenced block in order; an unclosed last fence runs to the end of the text. */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const opener = /^[ \t]*(`{3,})[ \t]*([^\s`]*)[^\n]*(?:\n|$)/gm;
  let match: RegExpExecArray | null;
  while ((match = opener.exec(text)) !== null) {
    const ticks = match[1] ?? "```";
    const lang = (match[2] ?? "").toLowerCase();
    const start = opener.lastIndex;
    const closer = new RegExp(`^[ \\t]*${ticks}\`*[ \\t]*$`, "gm");
    closer.lastIndex = start;
    const end = closer.exec(text);
    if (end === null) {
      blocks.push({ lang, body: text.slice(start), closed: false });
      break;
    }
    blocks.push({ lang, body: text.slice(start, end.index), closed: true });
    opener.lastIndex = end.index + end[0].length;
  }
  return blocks;
}

/** The end (exclusive) of the JSON value opening at `start`, honouring strings; undefined when it never closes. */
function balancedEnd(text: string, start: number): number | undefined {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return undefined;
      if (stack.length === 0) return i + 1;
    }
  }
  return undefined;
}

function firstJsonIn(text: string, opening: "[" | "{", accept: (value: unknown) => boolean): unknown {
  for (let i = text.indexOf(opening); i !== -1; i = text.indexOf(opening, i + 1)) {
    const end = balancedEnd(text, i);
    if (end === undefined) continue;
    try {
      const value = JSON.parse(text.slice(i, end)) as unknown;
      if (accept(value)) return value;
    } catch {
      // Prose can hold brackets ("[see above]"); keep looking for one that is JSON.
    }
  }
  return undefined;
}

/**
 * The first JSON array or object in an answer: inside a ```json (or bare) fence first, since that is what
 * the prompt asked for, then anywhere in the prose. `accept` skips values of the wrong shape (an example
 * object in the reasoning). Strict JSON only: a repaired guess could invent content.
 */
export function extractJson(text: string, opening: "[" | "{", accept: (value: unknown) => boolean = () => true): unknown {
  for (const block of fencedBlocks(text)) {
    if (block.lang !== "json" && block.lang !== "") continue;
    const found = firstJsonIn(block.body, opening, accept);
    if (found !== undefined) return found;
  }
  return firstJsonIn(text, opening, accept);
}
