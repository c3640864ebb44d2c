import { prettifyError, z } from "zod";
import { CHESS_FAN_OUT, CHESS_STEP_MEANS, CHESS_TEMPLATE } from "../core/chess";
import { DagRequestSchema, validateDag, type DagRequest } from "../core/dag";
import { dagSpec } from "../core/dag-workflow";
import { stagesFromCalls, type WorkflowSpec } from "../core/workflow";
import { PoolNameSchema, ReplayWorkflowSchema, type ReplayWorkflow } from "./schemas";

export interface WorkflowRequest {
  spec: WorkflowSpec;
  pool: string;
  sloMs?: number;
  dag?: DagRequest;
}

/** CHESS step names keep the CHESS template; any other replay expects exactly its own stages. */
function replaySpec(body: ReplayWorkflow): WorkflowSpec {
  const stages = stagesFromCalls(body.calls, CHESS_FAN_OUT);
  const chess = body.calls.every((c) => Object.hasOwn(CHESS_STEP_MEANS, c.step));
  return { kind: "replay", stages, template: chess ? [...CHESS_TEMPLATE] : stages.map((s) => s.step) };
}

const KindSchema = z.object({ kind: z.enum(["replay", "dag"]) });

/** A `POST /v1/workflows` body as the spec the objects run, or the message a 400 carries. */
export function parseWorkflowRequest(body: unknown): { ok: true; value: WorkflowRequest } | { ok: false; message: string } {
  const kind = KindSchema.safeParse(body);
  if (!kind.success) return { ok: false, message: 'kind must be "replay" or "dag"' };
  if (kind.data.kind === "replay") {
    const r = ReplayWorkflowSchema.safeParse(body);
    if (!r.success) return { ok: false, message: prettifyError(r.error) };
    return { ok: true, value: { spec: replaySpec(r.data), pool: r.data.pool, ...(r.data.sloMs === undefined ? {} : { sloMs: r.data.sloMs }) } };
  }
  // `pool` says where to run, not what to run: the DAG's own schema does not know it.
  const { pool: rawPool, ...rest } = body as Record<string, unknown>;
  const pool = PoolNameSchema.safeParse(rawPool);
  if (!pool.success) return { ok: false, message: `pool: ${prettifyError(pool.error)}` };
  const plan = validateDag(rest);
  if (!plan.ok) return { ok: false, message: plan.error.message };
  const dag = DagRequestSchema.parse(rest);
  return { ok: true, value: { spec: dagSpec(plan.value), pool: pool.data, dag, ...(plan.value.sloMs === undefined ? {} : { sloMs: plan.value.sloMs }) } };
}
