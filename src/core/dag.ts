import { z } from "zod";
import type { $ZodIssue } from "zod/v4/core";
import { LIMITS } from "./limits";
import { INPUT_NAME_PATTERN, STAGE_ID_PATTERN, parseTemplate, placeholdersOf, type TemplatePart } from "./template";

/**
 * Custom DAG workflows (`POST /v1/workflows` with `kind: "dag"`): the request schema, its validation into
 * a plan, and the plan queries the scheduler needs (ready stages, remaining stages). A stage runs when
 * every stage in its `after` has finished; its `fanOut` calls share one prompt template.
 */

/*
 * The bounds live in LIMITS.dag (src/core/limits.ts); these names stay because the DAG's tests and
 * messages are written in them.
 */
export const {
  maxStages: MAX_STAGES,
  maxFanOut: MAX_FAN_OUT,
  /** Σ fanOut over all stages. */
  maxTotalCalls: MAX_TOTAL_CALLS,
  maxPromptChars: MAX_PROMPT_CHARS,
  /** The bound on a stage's `maxTokens`. */
  maxOutputTokens: MAX_OUTPUT_TOKENS,
  maxInputs: MAX_INPUTS,
  maxInputChars: MAX_INPUT_CHARS,
  maxModelChars: MAX_MODEL_CHARS,
} = LIMITS.dag;
/** Same bound as every workflow's `sloMs`. */
export const MAX_SLO_MS = LIMITS.workflow.maxSloMs;
export { INPUT_NAME_PATTERN, STAGE_ID_PATTERN };

/*
 * max precedes int so that 1e300 reports the stage limit, not zod's safe-integer bound. The schema
 * checks shapes and per-field limits only; the graph (ids, edges, cycles, prompt references) is checked
 * by validateDag, so parse requests with validateDag rather than with the schema alone.
 */
export const DagStageSchema = z
  .object({
    id: z.string().regex(STAGE_ID_PATTERN),
    after: z.array(z.string()).max(MAX_STAGES).default([]),
    prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
    fanOut: z.number().min(1).max(MAX_FAN_OUT).int().default(1),
    maxTokens: z.number().min(1).max(MAX_OUTPUT_TOKENS).int(),
    /** The scheduler's output-length hint for one call; at most maxTokens. */
    expectedOutputTokens: z.number().positive().optional(),
  })
  .strict();
export type DagStage = z.infer<typeof DagStageSchema>;

export const DagRequestSchema = z
  .object({
    kind: z.literal("dag"),
    inputs: z
      .record(z.string().regex(INPUT_NAME_PATTERN), z.string().max(MAX_INPUT_CHARS))
      .refine((r) => Object.keys(r).length <= MAX_INPUTS, {
        error: (iss) => `has ${countKeys(iss.input)} entries, over the limit of ${MAX_INPUTS}`,
      })
      .default({}),
    stages: z.array(DagStageSchema).min(1).max(MAX_STAGES),
    /** End-to-end SLO in pool-clock milliseconds. */
    sloMs: z.number().positive().max(MAX_SLO_MS).optional(),
    model: z.string().min(1).max(MAX_MODEL_CHARS).optional(),
  })
  .strict();
export type DagRequest = z.infer<typeof DagRequestSchema>;

export interface PlannedStage extends DagStage {
  /** The parsed prompt, ready for render(). */
  template: TemplatePart[];
  /** Every stage that must finish first (direct `after` and theirs, transitively), in plan order. */
  ancestors: string[];
  /** Every stage that cannot start until this one finishes, transitively, in plan order. */
  descendants: string[];
}

/** Plain data, so a Durable Object can persist it; validateDag on the same request rebuilds it exactly. */
export interface DagPlan {
  inputs: Record<string, string>;
  sloMs?: number;
  model?: string;
  /** Topological: each stage after all of its `after`; among stages free to go, request order decides. */
  stages: PlannedStage[];
  totalCalls: number;
}

export type DagValidation =
  | { ok: true; value: DagPlan }
  | { ok: false; error: { code: "invalid_request"; message: string } };

export function validateDag(input: unknown): DagValidation {
  const parsed = DagRequestSchema.safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return invalid(first === undefined ? "invalid request" : describeIssue(first, input));
  }
  const planned = planGraph(parsed.data);
  return typeof planned === "string" ? invalid(planned) : { ok: true, value: planned };
}

/** Stages not finished or released whose `after` have all finished, in plan order. */
export function readyStages(plan: DagPlan, finished: ReadonlySet<string>, released: ReadonlySet<string>): PlannedStage[] {
  return plan.stages.filter((s) => !released.has(s.id) && !finished.has(s.id) && s.after.every((d) => finished.has(d)));
}

/** The stages not yet released, in plan order: "the remaining stages" of the SLO budget. */
export function remainingStages(plan: DagPlan, released: ReadonlySet<string>): string[] {
  return plan.stages.filter((s) => !released.has(s.id)).map((s) => s.id);
}

function invalid(message: string): DagValidation {
  return { ok: false, error: { code: "invalid_request", message } };
}

function countKeys(value: unknown): number {
  return typeof value === "object" && value !== null ? Object.keys(value).length : 0;
}

/** Returns the plan, or the first problem found as a message naming the stage. */
function planGraph(req: DagRequest): DagPlan | string {
  const byId = new Map<string, DagStage>();
  for (const s of req.stages) {
    if (byId.has(s.id)) return `duplicate stage id "${s.id}"`;
    byId.set(s.id, s);
  }
  const totalCalls = req.stages.reduce((n, s) => n + s.fanOut, 0);
  if (totalCalls > MAX_TOTAL_CALLS) {
    return `stages: ${totalCalls} calls in total (the sum of fanOut) are over the limit of ${MAX_TOTAL_CALLS}`;
  }
  for (const s of req.stages) {
    const seen = new Set<string>();
    for (const d of s.after) {
      if (!byId.has(d)) return `stage "${s.id}": after references unknown stage "${d}"`;
      if (seen.has(d)) return `stage "${s.id}": after lists "${d}" twice`;
      seen.add(d);
    }
    if (s.expectedOutputTokens !== undefined && s.expectedOutputTokens > s.maxTokens) {
      return `stage "${s.id}": expectedOutputTokens ${s.expectedOutputTokens} is over its maxTokens ${s.maxTokens}`;
    }
  }
  const order = topologicalOrder(req.stages);
  if (order.length < req.stages.length) return `stages form a cycle: ${describeCycle(req.stages, new Set(order.map((s) => s.id)))}`;

  const position = new Map(order.map((s, i) => [s.id, i]));
  const byPosition = (a: string, b: string) => (position.get(a) ?? 0) - (position.get(b) ?? 0);
  const ancestors = new Map<string, Set<string>>();
  for (const s of order) {
    const all = new Set<string>();
    for (const d of s.after) {
      all.add(d);
      for (const a of ancestors.get(d) ?? []) all.add(a);
    }
    ancestors.set(s.id, all);
  }

  const templates = new Map<string, TemplatePart[]>();
  for (const s of req.stages) {
    const checked = checkPrompt(s, req, byId, ancestors.get(s.id) ?? new Set());
    if (typeof checked === "string") return checked;
    templates.set(s.id, checked);
  }

  const stages = order.map((s): PlannedStage => ({
    ...s,
    after: [...s.after],
    template: templates.get(s.id) ?? [],
    ancestors: [...(ancestors.get(s.id) ?? [])].sort(byPosition),
    descendants: order.filter((o) => ancestors.get(o.id)?.has(s.id) === true).map((o) => o.id),
  }));
  const plan: DagPlan = { inputs: { ...req.inputs }, stages, totalCalls };
  if (req.sloMs !== undefined) plan.sloMs = req.sloMs;
  if (req.model !== undefined) plan.model = req.model;
  return plan;
}

/**
 * Repeatedly takes the first stage in request order whose `after` are all placed: the tie-break the
 * scheduler relies on for determinism. Quadratic, which is nothing at 32 stages. Stops short on a cycle.
 */
function topologicalOrder(stages: readonly DagStage[]): DagStage[] {
  const placed = new Set<string>();
  const order: DagStage[] = [];
  for (;;) {
    const next = stages.find((s) => !placed.has(s.id) && s.after.every((d) => placed.has(d)));
    if (next === undefined) return order;
    placed.add(next.id);
    order.push(next);
  }
}

/**
 * Every unplaced stage waits on another unplaced stage, so walking from one to a waited-on stage must
 * come back to itself. Printed in execution order (`x -> y`: y runs after x), starting from the stage
 * listed first in the request, so the same request always gives the same message.
 */
function describeCycle(stages: readonly DagStage[], placed: ReadonlySet<string>): string {
  const byId = new Map(stages.map((s) => [s.id, s]));
  const walk: string[] = [];
  let current = stages.find((s) => !placed.has(s.id));
  while (current !== undefined && !walk.includes(current.id)) {
    walk.push(current.id);
    const waitedOn: string | undefined = current.after.find((d) => !placed.has(d));
    current = waitedOn === undefined ? undefined : byId.get(waitedOn);
  }
  const start = current === undefined ? 0 : walk.indexOf(current.id);
  const cycle = walk.slice(start).reverse();
  const first = Math.max(0, cycle.indexOf(stages.find((s) => cycle.includes(s.id))?.id ?? ""));
  const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
  return [...rotated, rotated[0] ?? ""].join(" -> ");
}

function checkPrompt(
  s: DagStage,
  req: DagRequest,
  byId: ReadonlyMap<string, DagStage>,
  ancestors: ReadonlySet<string>,
): TemplatePart[] | string {
  const where = `stage "${s.id}"`;
  const parsed = parseTemplate(s.prompt);
  if (!parsed.ok) return `${where}: prompt has ${parsed.error}`;
  for (const p of placeholdersOf(parsed.parts)) {
    if (p.kind === "fanout-index") continue;
    if (p.kind === "input") {
      if (!Object.hasOwn(req.inputs, p.name)) return `${where}: prompt references unknown input "${p.name}"`;
      continue;
    }
    const target = byId.get(p.stage);
    if (target === undefined) return `${where}: prompt references ${p.raw}, but there is no stage "${p.stage}"`;
    if (!ancestors.has(p.stage)) return `${where}: prompt references ${p.raw}, which is not among its dependencies`;
    if (p.kind === "output-at" && p.index >= target.fanOut) {
      return `${where}: prompt references ${p.raw}, but stage "${p.stage}" has fanOut ${target.fanOut} (calls 0 to ${target.fanOut - 1})`;
    }
  }
  return parsed.parts;
}

/* Zod issues -> one sentence naming the stage (by id when it has a valid one) and the field. */

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (typeof v !== "object" || v === null || typeof key === "symbol" || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

function pathText(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key).slice(0, 40))}]`;
  }
  return out;
}

function shown(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value.length > 40 ? `"${value.slice(0, 40)}..."` : JSON.stringify(value);
  return `${/^[aeiou]/.test(typeof value) ? "an" : "a"} ${typeof value}`;
}

function predicate(issue: $ZodIssue, value: unknown): string {
  switch (issue.code) {
    case "invalid_type": {
      if (value === undefined) return "is required";
      const expected = issue.expected === "int" ? "integer" : issue.expected;
      return `must be ${/^[aeiou]/.test(expected) ? "an" : "a"} ${expected}, got ${shown(value)}`;
    }
    case "too_big":
      if (typeof value === "string") return `is ${value.length} characters, over the limit of ${issue.maximum}`;
      if (Array.isArray(value)) return `has ${value.length} entries, over the limit of ${issue.maximum}`;
      return `${shown(value)} is over the limit of ${issue.maximum}`;
    case "too_small":
      if (typeof value === "string") return "must not be empty";
      if (Array.isArray(value)) return `needs at least ${issue.minimum} entries`;
      return issue.inclusive === true
        ? `${shown(value)} is under the minimum of ${issue.minimum}`
        : `${shown(value)} must be greater than ${issue.minimum}`;
    case "invalid_format":
      return `must match ${issue.pattern ?? issue.format}, got ${shown(value)}`;
    case "invalid_value":
      return `must be ${issue.values.map((v) => JSON.stringify(v)).join(" or ")}`;
    case "unrecognized_keys":
      return `has unknown field ${issue.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(", ")}`;
    default:
      return issue.message;
  }
}

function describeIssue(issue: $ZodIssue, input: unknown): string {
  const path = issue.path;
  if (path.length === 1 && path[0] === "stages") {
    const stages = valueAt(input, path);
    const n = Array.isArray(stages) ? stages.length : 0;
    if (issue.code === "too_small") return "stages: at least one stage is required";
    if (issue.code === "too_big") return `stages: ${n} stages are over the limit of ${MAX_STAGES}`;
  }
  if (issue.code === "invalid_key") {
    const key = String(path.at(-1) ?? "");
    return `${pathText(path.slice(0, -1))}: name ${shown(key)} must match ${INPUT_NAME_PATTERN}`;
  }
  const value = valueAt(input, path);
  const [top, index, ...rest] = path;
  if (top === "stages" && typeof index === "number") {
    const id = valueAt(input, ["stages", index, "id"]);
    const where = typeof id === "string" && STAGE_ID_PATTERN.test(id) ? `stage "${id}"` : `stages[${index}]`;
    return rest.length === 0 ? `${where} ${predicate(issue, value)}` : `${where}: ${pathText(rest)} ${predicate(issue, value)}`;
  }
  return `${path.length === 0 ? "request" : pathText(path)} ${predicate(issue, value)}`;
}
