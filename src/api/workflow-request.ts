import { prettifyError, z } from "zod";
import { CHESS_FAN_OUT, CHESS_STEP_MEANS, CHESS_TEMPLATE } from "../core/chess";
import { DagRequestSchema, validateDag, type DagRequest } from "../core/dag";
import { dagSpec } from "../core/dag-workflow";
import type { DatabaseSchema } from "../core/db-schema";
import { newText2SqlRun } from "../core/text2sql/run";
import { Text2SqlConfigSchema, text2sqlTemplate } from "../core/text2sql/run-state";
import { stagesFromCalls, type WorkflowSpec } from "../core/workflow";
import type { Text2SqlMeta } from "../objects/workflow-store";
import { ReplayWorkflowSchema, RequestPoolSchema, SloScaleSchema, Text2SqlWorkflowSchema, type ReplayWorkflow, type Text2SqlWorkflow } from "./schemas";

/**
 * A request the objects can start as it is (replay, dag), or a text2sql one that needs its database first.
 * `P` is the pool: as the client named it (absent: POOL_ROUTES decides, from `model`), then as routed.
 */
export type WorkflowRequest<P extends string | undefined = string> =
  | { kind: "spec"; spec: WorkflowSpec; pool: P; model?: string; sloMs?: number; sloScale?: number; dag?: DagRequest }
  | { kind: "text2sql"; request: Text2SqlWorkflow; pool: P; sloMs?: number; sloScale?: number };

/** The parsed request, before routing: replay and text2sql name no model (they are written for DEFAULT_MODEL). */
export type UnroutedRequest = WorkflowRequest<string | undefined>;


/** CHESS step names keep the CHESS template; any other replay expects exactly its own stages. */
function replaySpec(body: ReplayWorkflow): WorkflowSpec {
  const stages = stagesFromCalls(body.calls, CHESS_FAN_OUT);
  const chess = body.calls.every((c) => Object.hasOwn(CHESS_STEP_MEANS, c.step));
  return { kind: "replay", stages, template: chess ? [...CHESS_TEMPLATE] : stages.map((s) => s.step) };
}

const KindSchema = z.object({ kind: z.enum(["replay", "dag", "text2sql"]) });
const slo = (sloMs: number | undefined, sloScale: number | undefined) => ({ ...(sloMs === undefined ? {} : { sloMs }), ...(sloScale === undefined ? {} : { sloScale }) });

/** A `POST /v1/workflows` body as what the objects run, or the message a 400 carries. */
export function parseWorkflowRequest(body: unknown): { ok: true; value: UnroutedRequest } | { ok: false; message: string } {
  const kind = KindSchema.safeParse(body);
  if (!kind.success) return { ok: false, message: 'kind must be "replay", "dag" or "text2sql"' };
  if (kind.data.kind === "replay") {
    const r = ReplayWorkflowSchema.safeParse(body);
    if (!r.success) return { ok: false, message: prettifyError(r.error) };
    return { ok: true, value: { kind: "spec", spec: replaySpec(r.data), pool: r.data.pool, ...slo(r.data.sloMs, r.data.sloScale) } };
  }
  if (kind.data.kind === "text2sql") {
    const r = Text2SqlWorkflowSchema.safeParse(body);
    if (!r.success) return { ok: false, message: prettifyError(r.error) };
    return { ok: true, value: { kind: "text2sql", request: r.data, pool: r.data.pool, ...slo(r.data.sloMs, r.data.sloScale) } };
  }
  // `pool` and `sloScale` say where and how urgently to run, not what to run: the DAG's own schema does not know them.
  const { pool: rawPool, sloScale: rawScale, ...rest } = body as Record<string, unknown>;
  const pool = RequestPoolSchema.safeParse(rawPool);
  if (!pool.success) return { ok: false, message: `pool: ${prettifyError(pool.error)}` };
  const scale = SloScaleSchema.safeParse(rawScale);
  if (!scale.success) return { ok: false, message: `sloScale: ${prettifyError(scale.error)}` };
  const plan = validateDag(rest);
  if (!plan.ok) return { ok: false, message: plan.error.message };
  const dag = DagRequestSchema.parse(rest);
  return { ok: true, value: { kind: "spec", spec: dagSpec(plan.value), pool: pool.data, dag, ...(dag.model === undefined ? {} : { model: dag.model }), ...slo(plan.value.sloMs, scale.data) } };
}

/** A text2sql request over its database's schema: the first stage, the budget's template, and the run to drive. */
export function text2sqlStart(r: Text2SqlWorkflow, schema: DatabaseSchema, tenant: string): { spec: WorkflowSpec; text2sql: Text2SqlMeta } {
  const config = Text2SqlConfigSchema.parse({ candidates: r.candidates, maxRounds: r.maxRounds, tests: r.tests, maxRows: r.maxRows });
  const { run, first } = newText2SqlRun({ question: r.question, ...(r.hint === undefined ? {} : { hint: r.hint }), database: r.database, schema, config });
  return { spec: { kind: "text2sql", stages: [first], template: text2sqlTemplate(config) }, text2sql: { tenant, run, consumed: -1, executions: [] } };
}
