import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { completeCall, startWorkflow, WorkflowStateSchema } from "../core/workflow-run";
import { DagRequestSchema, validateDag, type DagRequest } from "../core/dag";
import { renderDagStage } from "../core/dag-workflow";
import { WorkflowSpecSchema, type WorkflowSpec } from "../core/workflow";
import type { CallReport } from "./gpu-instance";
import { instanceObjectName } from "./names";
import { err, ok, type Result } from "./result";
import { migrate } from "./sqlite";

const MIGRATIONS = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE calls (call_id TEXT PRIMARY KEY, stage INTEGER NOT NULL, json TEXT NOT NULL)`,
];

export const StatusSchema = z.enum(["queued", "running", "succeeded", "failed", "cancelled"]);
const MetaSchema = z.object({
  state: WorkflowStateSchema,
  status: StatusSchema,
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  pool: z.string(),
  createdAtMs: z.number(),
  /** A custom DAG workflow's request (stored as sent; validateDag rebuilds its plan). */
  dag: DagRequestSchema.optional(),
});
export type WorkflowMeta = z.infer<typeof MetaSchema>;

const CallRecordSchema = z.object({
  id: z.string(),
  stageIndex: z.number(),
  step: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  instanceId: z.string(),
  estimateS: z.number(),
  budgetS: z.number(),
  deadlineS: z.number(),
  alphaVersion: z.number(),
  releasedAt: z.number(),
  enqueuedAt: z.number().optional(),
  admittedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  laxityS: z.number().optional(),
  completionTokens: z.number().optional(),
  /** What the model wrote, cut at MAX_OUTPUT_CHARS: later stages' prompts and the caller read it. */
  output: z.string().optional(),
  error: z.string().optional(),
});
export type CallRecord = z.infer<typeof CallRecordSchema>;

/** One call's row stays far below a Durable Object's 2 MB row limit even with many calls per stage. */
const MAX_OUTPUT_CHARS = 64_000;

export interface StartInput {
  id: string;
  spec: WorkflowSpec;
  sloS: number;
  arrivalS: number;
  pool: string;
  dag?: DagRequest;
}

/**
 * One per workflow: its DAG state, stage releases (one coordinator RPC each), the calls' records,
 * and completions, recognised by call id so a repeated report changes nothing.
 */
export class WorkflowObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage.sql, MIGRATIONS));
  }

  async start(input: StartInput): Promise<Result<{ id: string; status: string }>> {
    const existing = this.meta();
    if (existing !== undefined) return ok({ id: existing.state.id, status: existing.status });
    const spec = WorkflowSpecSchema.parse(input.spec);
    const meta: WorkflowMeta = { state: startWorkflow(input.id, spec, input.arrivalS, input.sloS), status: "queued", pool: input.pool, createdAtMs: Date.now(), ...(input.dag === undefined ? {} : { dag: input.dag }) };
    this.saveMeta(meta);
    await this.releaseNext(meta);
    return ok({ id: input.id, status: meta.status });
  }

  async onCallDone(report: CallReport): Promise<void> {
    const meta = this.meta();
    const rec = this.callRecord(report.callId);
    if (meta === undefined || rec === undefined || rec.finishedAt !== undefined) return;
    const outcome = report.outcome;
    this.saveCall({
      ...rec,
      enqueuedAt: report.enqueuedAt,
      admittedAt: report.admittedAt,
      finishedAt: report.finishedAt,
      laxityS: report.laxityS,
      ...(outcome.ok ? { completionTokens: outcome.completionTokens, output: outcome.text.slice(0, MAX_OUTPUT_CHARS) } : { error: outcome.error.message }),
    });
    if (meta.status !== "running") return;
    if (!outcome.ok) {
      await this.finish(meta, "failed", { code: outcome.error.code, message: `call ${rec.id} on ${report.instanceId}: ${outcome.error.message}` });
      return;
    }
    const result = completeCall(meta.state, report.callId, report.finishedAt);
    this.saveMeta(meta);
    if (result === "stage-done") await this.releaseNext(meta);
    else if (result === "workflow-done") await this.finish(meta, "succeeded");
  }

  async cancel(): Promise<Result<{ status: string }>> {
    const meta = this.meta();
    if (meta === undefined) return err("not_found", "no such workflow");
    if (meta.status === "succeeded" || meta.status === "failed" || meta.status === "cancelled") return err("conflict", `workflow already ${meta.status}`);
    await this.finish(meta, "cancelled");
    return ok({ status: "cancelled" });
  }

  view(): Result<{ meta: WorkflowMeta; calls: CallRecord[] }> {
    const meta = this.meta();
    if (meta === undefined) return err("not_found", "no such workflow");
    return ok({ meta, calls: this.calls() });
  }

  /** Every call, by stage and then by its place in the stage (the id's last segment, compared as a number). */
  private calls(): CallRecord[] {
    const place = (id: string): number => Number(id.slice(id.lastIndexOf(":") + 1));
    return this.ctx.storage.sql
      .exec<{ json: string }>("SELECT json FROM calls")
      .toArray()
      .map((r) => CallRecordSchema.parse(JSON.parse(r.json)))
      .sort((a, b) => a.stageIndex - b.stageIndex || place(a.id) - place(b.id));
  }

  private async releaseNext(meta: WorkflowMeta): Promise<void> {
    if (meta.dag !== undefined) this.renderNextDagStage(meta, meta.dag);
    const coordinator = this.env.COORDINATOR.getByName(meta.pool);
    const r = await coordinator.releaseStage(meta.state);
    // A cancel may have landed while the coordinator answered: then the stage goes nowhere.
    const now = this.meta();
    if (now !== undefined && now.status !== "queued" && now.status !== "running") {
      if (r.ok) await Promise.all(r.dispatched.map((d) => coordinator.callsChanged(d.instanceId, [], [d.call.id])));
      return;
    }
    if (!r.ok) {
      await this.finish(meta, "failed", r.error);
      return;
    }
    meta.state = r.state;
    meta.status = "running";
    this.saveMeta(meta);
    const byInstance = new Map<string, { call: (typeof r.dispatched)[number]["call"]; estimateS: number }[]>();
    for (const d of r.dispatched) {
      const c = d.call;
      this.saveCall({ id: c.id, stageIndex: c.stageIndex, step: c.step, inputTokens: c.inputTokens, outputTokens: c.outputTokens, instanceId: d.instanceId, estimateS: d.estimateS, budgetS: c.budgetS, deadlineS: c.deadlineS, alphaVersion: r.alphaVersion, releasedAt: c.releasedAt });
      byInstance.set(d.instanceId, [...(byInstance.get(d.instanceId) ?? []), { call: c, estimateS: d.estimateS }]);
    }
    await Promise.all([...byInstance].map(([id, items]) => this.env.GPU_INSTANCE.getByName(instanceObjectName(meta.pool, id)).enqueue(items, r.queuePolicy)));
  }

  /** A DAG stage's prompts are rendered from what earlier stages wrote, just before it is released. */
  private renderNextDagStage(meta: WorkflowMeta, request: DagRequest): void {
    const plan = validateDag(request);
    const index = meta.state.stageIndex + 1;
    const stage = meta.state.spec.stages[index];
    if (!plan.ok || stage === undefined) return;
    const outputs: Record<string, string[]> = {};
    for (const c of this.calls()) {
      const id = plan.value.stages[c.stageIndex]?.id;
      if (id !== undefined) (outputs[id] ??= []).push(c.output ?? "");
    }
    stage.calls = renderDagStage(plan.value, index, outputs);
  }

  /** Ends the workflow exactly once; queued calls leave their instances and the pool's load. */
  private async finish(meta: WorkflowMeta, status: "succeeded" | "failed" | "cancelled", error?: { code: string; message: string }): Promise<void> {
    meta.status = status;
    if (error !== undefined) meta.error = error;
    this.saveMeta(meta);
    if (status === "succeeded") return;
    const open = this.calls().filter((c) => c.finishedAt === undefined);
    const byInstance = new Map<string, string[]>();
    for (const c of open) byInstance.set(c.instanceId, [...(byInstance.get(c.instanceId) ?? []), c.id]);
    const coordinator = this.env.COORDINATOR.getByName(meta.pool);
    await Promise.all(
      [...byInstance].map(async ([instanceId, ids]) => {
        const removed = await this.env.GPU_INSTANCE.getByName(instanceObjectName(meta.pool, instanceId)).cancel(ids);
        await coordinator.callsChanged(instanceId, [], removed);
      }),
    );
  }

  private meta(): WorkflowMeta | undefined {
    const row = this.ctx.storage.sql.exec<{ json: string }>("SELECT json FROM meta WHERE key = 'meta'").toArray()[0];
    return row === undefined ? undefined : MetaSchema.parse(JSON.parse(row.json));
  }

  private saveMeta(meta: WorkflowMeta): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (key, json) VALUES ('meta', ?)", JSON.stringify(meta));
  }

  private callRecord(id: string): CallRecord | undefined {
    const row = this.ctx.storage.sql.exec<{ json: string }>("SELECT json FROM calls WHERE call_id = ?", id).toArray()[0];
    return row === undefined ? undefined : CallRecordSchema.parse(JSON.parse(row.json));
  }

  private saveCall(c: CallRecord): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO calls (call_id, stage, json) VALUES (?, ?, ?)", c.id, c.stageIndex, JSON.stringify(c));
  }
}
