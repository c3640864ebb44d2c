import type { ServiceObservation } from "../core/calibration";

/** Longest a start or finish waits to be batched into one report to the coordinator (real time). */
const LOAD_REPORT_MS = 10;

type Batch = { started: { callId: string; atS: number }[]; finished: string[]; services: ServiceObservation[] };
type Send = (started: Batch["started"], finished: Batch["finished"], services: Batch["services"]) => Promise<void> | undefined;

/**
 * Starts and finishes reach the coordinator in batches, at most one RPC per LOAD_REPORT_MS: its
 * load figures may lag by that much (calls last seconds), and under load one RPC carries many
 * calls instead of two RPCs per call. Successful calls carry their service time, which calibrates
 * the instance's cost model at the coordinator. A failed report is retried with the next batch. `send`
 * answers undefined when there is nowhere to send (an unconfigured instance): the batch is dropped.
 */
export class LoadReporter {
  private batch: Batch = { started: [], finished: [], services: [] };
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly send: Send) {}

  started(callId: string, atS: number): void {
    this.batch.started.push({ callId, atS });
    this.schedule();
  }

  finished(callId: string, service?: ServiceObservation): void {
    this.batch.finished.push(callId);
    if (service !== undefined) this.batch.services.push(service);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const batch = this.batch;
      this.batch = { started: [], finished: [], services: [] };
      if (batch.started.length + batch.finished.length === 0) return;
      this.send(batch.started, batch.finished, batch.services)?.catch(() => {
        this.batch.started.unshift(...batch.started);
        this.batch.finished.unshift(...batch.finished);
        this.batch.services.unshift(...batch.services);
        this.schedule();
      });
    }, LOAD_REPORT_MS);
  }
}
