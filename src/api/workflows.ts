import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { CHESS_FAN_OUT, CHESS_STEP_MEANS, CHESS_TEMPLATE } from "../core/chess";
import { stagesFromCalls, type WorkflowSpec } from "../core/workflow";
import { errorBody } from "./errors";
import { failure } from "./results";
import { DEFAULT_SLO_SCALE, ReplayWorkflowSchema, WorkflowIdSchema, type ReplayWorkflow } from "./schemas";
import { validationHook } from "./validation";
import { workflowView } from "./workflow-view";

function newWorkflowId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `wf_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** CHESS step names keep the CHESS template; any other replay expects exactly its own stages. */
function specOf(body: ReplayWorkflow): WorkflowSpec {
  const stages = stagesFromCalls(body.calls, CHESS_FAN_OUT);
  const chess = body.calls.every((c) => Object.hasOwn(CHESS_STEP_MEANS, c.step));
  return { kind: "replay", stages, template: chess ? [...CHESS_TEMPLATE] : stages.map((s) => s.step) };
}

export const workflows = new Hono<{ Bindings: Env }>()
  .post("/", zValidator("json", ReplayWorkflowSchema, validationHook), async (c) => {
    const body = c.req.valid("json");
    const clock = await c.env.COORDINATOR.getByName(body.pool).clock();
    if (clock.baseSloS === null) return c.json(errorBody("no_instance", `pool "${body.pool}" has no active instance`), 503);
    const id = newWorkflowId();
    const sloS = body.sloMs !== undefined ? body.sloMs / 1000 : DEFAULT_SLO_SCALE * clock.baseSloS;
    const r = await c.env.WORKFLOW.getByName(id).start({ id, spec: specOf(body), sloS, arrivalS: clock.nowS, pool: body.pool });
    if (!r.ok) return failure(c, r.error);
    return c.json({ id, status: r.value.status, links: { self: `/v1/workflows/${id}` } }, 202);
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    if (!WorkflowIdSchema.safeParse(id).success) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).view();
    if (!r.ok) return failure(c, r.error);
    return c.json(workflowView(r.value.meta, r.value.calls));
  })
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!WorkflowIdSchema.safeParse(id).success) return c.json(errorBody("not_found", "no such workflow"), 404);
    const r = await c.env.WORKFLOW.getByName(id).cancel();
    if (!r.ok) return failure(c, r.error);
    return c.json({ id, status: r.value.status });
  });
