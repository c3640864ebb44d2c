import type { ServiceObservation } from "../core/calibration";

/** Longest a start or finish waits to be batched into one report to the coordinator (real time). */
const LOAD_REPORT_MS = 10;

/**
 * How a finished call went, for the instance's health: `ok`, or failed with `fault` naming the server's
 * failure (refused, 5xx, timeout, cut stream); a failure that is not the server's (a 4xx, a cancel, an
 * evacuation) has `fault` null and says nothing about its health.
 */
export type CallOutcome = { callId: string; ok: true } | { callId: string; ok: false; fault: string | null };

type Batch = { started: { callId: string; atS: number }[]; services: ServiceObservation[]; outcomes: CallOutcome[] };
type Send = (started: Batch["started"], finished: string[], services: Batch["services"], outcomes: Batch["outcomes"]) => Promise<void> | undefined;

const empty = (): Batch => ({ started: [], services: [], outcomes: [] });

/**
 * Starts and finishes reach the coordinator in batches, at most one RPC per LOAD_REPORT_MS: its
 * load figures may lag by that much (calls last seconds), and under load one RPC carries many
 * calls instead of two RPCs per call. Successful calls carry their service time, which calibrates
 * the instance's cost model at the coordinator; every finish carries its outcome, which feeds the
 * instance's health. A failed report is retried with the next batch. `send` answers undefined when
 * there is nowhere to send (an unconfigured instance): the batch is dropped.
 */
export class LoadReporter {
  private batch: Batch = empty();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly send: Send) {}

  started(callId: string, atS: number): void {
    this.batch.started.push({ callId, atS });
    this.schedule();
  }

  finished(outcome: CallOutcome, service?: ServiceObservation): void {
    this.batch.outcomes.push(outcome);
    if (service !== undefined) this.batch.services.push(service);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const batch = this.batch;
      this.batch = empty();
      if (batch.started.length + batch.outcomes.length === 0) return;
      this.send(batch.started, batch.outcomes.map((o) => o.callId), batch.services, batch.outcomes)?.catch(() => {
        this.batch.started.unshift(...batch.started);
        this.batch.services.unshift(...batch.services);
        this.batch.outcomes.unshift(...batch.outcomes);
        this.schedule();
      });
    }, LOAD_REPORT_MS);
  }
}
