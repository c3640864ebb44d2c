/**
 * A WorkflowObject's progress events (core/workflow-events.ts): written to its SQLite (table `events`) in
 * the same synchronous step as the state change they tell of, so a restart loses none and a replay is
 * exact, and followed live by any number of subscribers (GET /v1/workflows/:id/events).
 *
 * Why pull-based, as call-streams.ts: workerd forbids using an I/O object of one request from another.
 * Each subscriber's stream is read in its own request's context, straight from storage, a batch at a
 * time; an append (in whatever context changed the state) only wakes waiters. A slow reader costs one
 * batch of memory, never a queue. A Durable Object restart breaks open streams; clients reconnect with
 * Last-Event-ID and lose nothing.
 *
 * `workflow_done` is the last event: nothing is appended after it (a late report of a cancelled
 * workflow's call changes no stream), and every open stream sends it and closes.
 */
import { SSE_KEEP_ALIVE, sseFrame, sseRetry, type WorkflowEventData } from "../core/workflow-events";
import type { DispatchedCall } from "../core/pool-scheduler";
import type { ReleasedCall, WorkflowState } from "../core/workflow-run";
import { lastAttempt } from "../core/text2sql/run-stages";
import type { Text2SqlRun } from "../core/text2sql/run-state";
import type { CallReport } from "./report-outbox";
import { isLive, ownSloS, type CallRecord, type WorkflowMeta, type WorkflowStore } from "./workflow-store";

/** A comment every so often keeps proxies from closing a quiet stream (real ms). */
export const HEARTBEAT_MS = 15_000;
/** What an EventSource waits before reconnecting after a broken stream (real ms). */
const RETRY_MS = 2_000;
/** Events read from storage per pull: what one slow subscriber holds in memory at most. */
const BATCH = 64;

const encoder = new TextEncoder();

/** Distributive, so each event type keeps its own fields; the time is stamped on append. */
type Untimed<T> = T extends unknown ? Omit<T, "atMs"> : never;
type EventInput = Untimed<WorkflowEventData>;
/** Where the coordinator placed a call. */
type Placement = Pick<DispatchedCall, "instanceId" | "gpu" | "estimateS">;
/** A heartbeat faster than this would make a quiet stream busy (real ms). */
const MIN_HEARTBEAT_MS = 10;

export class WorkflowEvents {
  private wake: (() => void)[] = [];

  constructor(private readonly store: WorkflowStore) {}

  /** Records one event (none after the workflow's end) and wakes the subscribers. */
  append(e: EventInput): void {
    if (this.store.lastEvent().done) return;
    this.store.appendEvent({ ...e, atMs: Date.now() });
    const waiters = this.wake;
    this.wake = [];
    for (const w of waiters) w();
  }

  /** The stage just released (the state's current one) and each of its calls, as the coordinator placed them. */
  released(state: WorkflowState, dispatched: readonly ({ call: ReleasedCall } & Placement)[]): void {
    const first = dispatched[0]?.call;
    const stage = state.stageIndex;
    this.append({ type: "stage_released", stage, step: state.spec.stages[stage]?.step ?? "", calls: dispatched.length, budgetS: first?.budgetS ?? 0, deadlineS: first?.deadlineS ?? 0 });
    for (const d of dispatched) this.dispatched(d.call, d, d.call.releasedAt);
  }

  /** A call bound to an instance: at its stage's release (`atS` the release) or again after a failure (`atS` the failure). */
  dispatched(call: ReleasedCall, placed: Placement, atS: number): void {
    this.append({
      type: "call_dispatched", callId: call.id, stage: call.stageIndex, step: call.step, instanceId: placed.instanceId, gpu: placed.gpu,
      estimateS: placed.estimateS, laxityS: call.deadlineS - atS - placed.estimateS, dispatch: call.dispatch ?? 0,
    });
  }

  /** A call's end, ok or failed for good. */
  finished(rec: CallRecord, report: CallReport): void {
    const o = report.outcome;
    this.append({
      type: "call_finished", callId: rec.id, instanceId: report.instanceId, dispatch: report.dispatch, ok: o.ok,
      latencyS: report.finishedAt - rec.releasedAt, serviceS: report.finishedAt - report.admittedAt, laxityAtAdmissionS: report.laxityS,
      ...(o.ok ? { completionTokens: o.completionTokens } : { error: { code: o.error.code, message: o.error.message } }),
    });
  }

  /** A failed attempt (or a hand-back) whose call goes out again. */
  failed(report: CallReport, evacuated: boolean): void {
    if (report.outcome.ok) return;
    const { code, message } = report.outcome.error;
    this.append({ type: "call_failed", callId: report.callId, instanceId: report.instanceId, dispatch: report.dispatch, error: { code, message }, willRetry: true, evacuated });
  }

  /** The candidates a text2sql run is about to revise (run.inStage), each with what failed, before the revise stage is released. */
  correctionRound(run: Text2SqlRun): void {
    for (const index of run.inStage) {
      const c = run.candidates[index];
      const last = c === undefined ? undefined : lastAttempt(c);
      if (last === undefined || last.status === "ok") continue;
      const error = last.status === "empty" ? "the query returned no rows" : (last.error ?? "the query failed");
      this.append({ type: "correction_round", round: run.rounds, candidate: index, ...(last.sql === undefined ? {} : { sql: last.sql }), status: last.status, error });
    }
  }

  /** The end; the meta is the one just saved with its final status. */
  done(meta: WorkflowMeta): void {
    if (meta.status !== "succeeded" && meta.status !== "failed" && meta.status !== "cancelled") return;
    const end = meta.state.finishedAt;
    const latencyS = meta.status === "succeeded" && end !== undefined ? end - meta.state.arrivalS : null;
    const sloS = ownSloS(meta);
    this.append({ type: "workflow_done", status: meta.status, latencyS, sloS, sloMet: latencyS === null ? null : latencyS <= sloS, ...(meta.error === undefined ? {} : { error: meta.error }) });
  }

  /**
   * A subscriber's stream after `afterSeq`; null when the workflow ended at or before it (nothing left to
   * send). A workflow that ended before events existed gets its `workflow_done` now, so its stream ends too.
   */
  open(meta: WorkflowMeta, afterSeq: number, heartbeatMs?: number): ReadableStream<Uint8Array> | null {
    if (!isLive(meta) && !this.store.lastEvent().done) this.done(meta);
    const last = this.store.lastEvent();
    return last.done && afterSeq >= last.seq ? null : this.subscribe(afterSeq, Math.max(MIN_HEARTBEAT_MS, heartbeatMs ?? HEARTBEAT_MS));
  }

  /**
   * The events after `afterSeq` as Server-Sent Events: `retry:` first, then the stored ones, then live ones
   * as they come, a keep-alive comment after `heartbeatMs` of silence; closed after `workflow_done`.
   */
  subscribe(afterSeq: number, heartbeatMs = HEARTBEAT_MS): ReadableStream<Uint8Array> {
    let sent = afterSeq;
    let head = sseRetry(RETRY_MS);
    let closed = false;
    let waiting: (() => void) | undefined;
    const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string): void => {
      controller.enqueue(encoder.encode(head + text));
      head = "";
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        while (!closed) {
          const batch = this.store.events(sent, BATCH);
          const last = batch.at(-1);
          const ended = last === undefined ? this.store.lastEvent().done : last.data.type === "workflow_done";
          if (last !== undefined) sent = last.seq;
          if (last !== undefined || head !== "" || ended) send(controller, batch.map(sseFrame).join(""));
          if (ended) {
            closed = true;
            controller.close();
          }
          if (last !== undefined || ended) return;
          const woke = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), heartbeatMs);
            waiting = () => {
              clearTimeout(timer);
              resolve(true);
            };
            this.wake.push(waiting);
          });
          const mine = waiting;
          waiting = undefined;
          if (!woke) {
            this.wake = this.wake.filter((w) => w !== mine);
            if (!closed) send(controller, SSE_KEEP_ALIVE);
            return;
          }
        }
      },
      cancel: () => {
        closed = true;
        waiting?.();
      },
    });
  }
}
