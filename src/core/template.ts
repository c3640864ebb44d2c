/**
 * Prompt templates of custom DAG workflows. A prompt is text with placeholders:
 *
 *   {{inputs.NAME}}            the request's input NAME
 *   {{stages.ID.output}}       stage ID's output (its calls' texts joined by OUTPUT_SEPARATOR)
 *   {{stages.ID.outputs}}      stage ID's outputs as a numbered list "1. ...\n2. ..."
 *   {{stages.ID.outputs[N]}}   the text of stage ID's call N (0-based, like {{fanout.index}})
 *   {{fanout.index}}           this call's index within its stage's fan-out, from 0
 *
 * Spaces just inside the braces are allowed ({{ inputs.q }}). `\{{` is a literal `{{`; no other
 * backslash is special. Rendering is a single pass: inserted values are never scanned for placeholders,
 * so an input or an LLM output containing `{{...}}` cannot pull other data into a prompt.
 */

export const STAGE_ID_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** A leading letter keeps names such as `__proto__` out of the plain objects that carry inputs. */
export const INPUT_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const OUTPUT_SEPARATOR = "\n\n";

export type Placeholder =
  | { kind: "input"; name: string }
  | { kind: "output"; stage: string }
  | { kind: "outputs"; stage: string }
  | { kind: "output-at"; stage: string; index: number }
  | { kind: "fanout-index" };

/** `raw` is the placeholder exactly as written, so errors can quote what the user typed. */
export type TemplatePart = { kind: "text"; text: string } | (Placeholder & { raw: string });

export type ParseResult = { ok: true; parts: TemplatePart[] } | { ok: false; error: string };

export interface RenderContext {
  inputs: Readonly<Record<string, string>>;
  /** Per finished stage, the text of call i at index i (call order, not completion order). */
  outputs: Readonly<Record<string, readonly string[]>>;
  fanoutIndex: number;
}

/** Rendering needs data the caller did not supply: the plan and the context disagree (a bug, not user error). */
export class TemplateRenderError extends Error {
  override name = "TemplateRenderError";
}

const OPEN = "{{";
const CLOSE = "}}";
const ESCAPE = "\\";
/** Quoted placeholders are cut to this length so a runaway `{{` does not echo a whole prompt back. */
const MAX_QUOTED = 80;

const ID = "[a-z][a-z0-9_]{0,31}";
const INPUT_FORM = /^inputs\.([A-Za-z][A-Za-z0-9_]{0,63})$/;
const STAGE_FORM = new RegExp(`^stages\\.(${ID})\\.(output|outputs)$`);
const STAGE_AT_FORM = new RegExp(`^stages\\.(${ID})\\.outputs\\[(0|[1-9][0-9]{0,3})\\]$`);
const FANOUT_FORM = /^fanout\.index$/;

function quote(raw: string): string {
  return raw.length > MAX_QUOTED ? `${raw.slice(0, MAX_QUOTED)}...` : raw;
}

/** Reads the inside of one `{{...}}`; undefined when it is none of the known forms. */
function parsePlaceholder(inner: string): Placeholder | undefined {
  const body = inner.trim();
  const input = INPUT_FORM.exec(body);
  if (input?.[1] !== undefined) return { kind: "input", name: input[1] };
  const stage = STAGE_FORM.exec(body);
  if (stage?.[1] !== undefined) return { kind: stage[2] === "outputs" ? "outputs" : "output", stage: stage[1] };
  const at = STAGE_AT_FORM.exec(body);
  if (at?.[1] !== undefined && at[2] !== undefined) return { kind: "output-at", stage: at[1], index: Number(at[2]) };
  if (FANOUT_FORM.test(body)) return { kind: "fanout-index" };
  return undefined;
}

export function parseTemplate(template: string): ParseResult {
  const parts: TemplatePart[] = [];
  let text = "";
  let i = 0;
  for (;;) {
    const start = template.indexOf(OPEN, i);
    if (start < 0) break;
    if (start > i && template.charAt(start - 1) === ESCAPE) {
      text += template.slice(i, start - 1) + OPEN;
      i = start + OPEN.length;
      continue;
    }
    text += template.slice(i, start);
    const end = template.indexOf(CLOSE, start + OPEN.length);
    if (end < 0) return { ok: false, error: `unclosed placeholder ${quote(template.slice(start))}` };
    const raw = template.slice(start, end + CLOSE.length);
    const placeholder = parsePlaceholder(template.slice(start + OPEN.length, end));
    if (placeholder === undefined) return { ok: false, error: `unknown placeholder ${quote(raw)}` };
    if (text !== "") parts.push({ kind: "text", text });
    text = "";
    parts.push({ ...placeholder, raw });
    i = end + CLOSE.length;
  }
  text += template.slice(i);
  if (text !== "") parts.push({ kind: "text", text });
  return { ok: true, parts };
}

export function placeholdersOf(parts: readonly TemplatePart[]): Array<Placeholder & { raw: string }> {
  const out: Array<Placeholder & { raw: string }> = [];
  for (const p of parts) if (p.kind !== "text") out.push(p);
  return out;
}

/** Own properties only: a stage or input named like an Object.prototype member must not resolve to it. */
function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function stageOutputs(ctx: RenderContext, stage: string, raw: string): readonly string[] {
  const outs = own(ctx.outputs, stage);
  if (outs === undefined || outs.length === 0) throw new TemplateRenderError(`${raw}: stage "${stage}" has no outputs`);
  return outs;
}

function valueOf(p: Placeholder & { raw: string }, ctx: RenderContext): string {
  switch (p.kind) {
    case "input": {
      const value = own(ctx.inputs, p.name);
      if (value === undefined) throw new TemplateRenderError(`${p.raw}: no input "${p.name}"`);
      return value;
    }
    case "output":
      return stageOutputs(ctx, p.stage, p.raw).join(OUTPUT_SEPARATOR);
    case "outputs":
      return stageOutputs(ctx, p.stage, p.raw)
        .map((text, i) => `${i + 1}. ${text}`)
        .join("\n");
    case "output-at": {
      const outs = stageOutputs(ctx, p.stage, p.raw);
      const text = outs[p.index];
      if (text === undefined) throw new TemplateRenderError(`${p.raw}: stage "${p.stage}" has ${outs.length} outputs`);
      return text;
    }
    case "fanout-index":
      return String(ctx.fanoutIndex);
  }
}

/** Renders a template (as text, or as parts from parseTemplate) against one call's context. */
export function render(template: string | readonly TemplatePart[], ctx: RenderContext): string {
  let parts: readonly TemplatePart[];
  if (typeof template === "string") {
    const parsed = parseTemplate(template);
    if (!parsed.ok) throw new TemplateRenderError(parsed.error);
    parts = parsed.parts;
  } else {
    parts = template;
  }
  let out = "";
  for (const p of parts) out += p.kind === "text" ? p.text : valueOf(p, ctx);
  return out;
}
