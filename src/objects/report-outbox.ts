/**
 * A GpuInstanceObject's call reports on their way to the workflows, in its SQLite (table `outbox`), so
 * an end that happened is told even if the workflow's object is restarting, or this one restarts before
 * it was told. Delivery is at least once: a report whose answer was lost is sent again, and the
 * workflow recognises it by call id and dispatch number (WorkflowObject.onCallDone).
 */
import { z } from "zod";
import { ReleasedCallSchema } from "../core/workflow-run";

const ErrorSchema = z.object({ code: z.string(), status: z.number().optional(), message: z.string() });
const OutcomeSchema = z.union([
  z.object({ ok: z.literal(true), promptTokens: z.number(), completionTokens: z.number(), finishReason: z.string(), text: z.string() }),
  z.object({ ok: z.literal(false), error: ErrorSchema }),
]);

/** What an instance tells a workflow about one of its calls. */
export const CallReportSchema = z.object({
  callId: z.string(),
  workflowId: z.string(),
  /** Which dispatch of the call this was (ReleasedCall.dispatch): a report of an earlier one is stale. */
  dispatch: z.number().int().nonnegative(),
  instanceId: z.string(),
  enqueuedAt: z.number(),
  admittedAt: z.number(),
  finishedAt: z.number(),
  laxityS: z.number(),
  outcome: OutcomeSchema,
  /** A failed call comes back whole, so its workflow can send it elsewhere (its prompt lives here only). */
  call: ReleasedCallSchema.optional(),
});
export type CallReport = z.infer<typeof CallReportSchema>;

export const OUTBOX_MIGRATION = `CREATE TABLE outbox (key TEXT PRIMARY KEY, json TEXT NOT NULL)`;

export class ReportOutbox {
  private readonly sending = new Set<string>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly deliver: (r: CallReport) => Promise<void>,
  ) {}

  get size(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /** The calls whose reports wait here. */
  callIds(): Set<string> {
    return new Set(this.sql.exec<{ key: string }>("SELECT key FROM outbox").toArray().map((r) => r.key.slice(0, r.key.lastIndexOf("#"))));
  }

  /** Stores the report for `flush` (the instance's alarm) to send. */
  put(r: CallReport): string {
    const key = `${r.callId}#${r.dispatch}`;
    this.sql.exec("INSERT OR REPLACE INTO outbox (key, json) VALUES (?, ?)", key, JSON.stringify(r));
    return key;
  }

  /** Stores the report, then sends it; a failed send stays for `flush`. */
  async send(r: CallReport): Promise<void> {
    await this.attempt(this.put(r), r);
  }

  /** Sends every stored report not already on its way; answers how many are still undelivered. */
  async flush(): Promise<number> {
    const rows = this.sql.exec<{ key: string; json: string }>("SELECT key, json FROM outbox").toArray();
    await Promise.all(rows.filter((r) => !this.sending.has(r.key)).map((r) => this.attempt(r.key, CallReportSchema.parse(JSON.parse(r.json)))));
    return this.size;
  }

  private async attempt(key: string, r: CallReport): Promise<void> {
    this.sending.add(key);
    try {
      await this.deliver(r);
      this.sql.exec("DELETE FROM outbox WHERE key = ?", key);
    } catch (e) {
      console.error(`report of call ${r.callId} not delivered yet (retried by the alarm): ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.sending.delete(key);
    }
  }
}
