/** Longest a start or finish waits to be batched into one report to the coordinator (real time). */
const LOAD_REPORT_MS = 10;

type Send = (started: { callId: string; atS: number }[], finished: string[]) => Promise<void> | undefined;

/**
 * Starts and finishes reach the coordinator in batches, at most one RPC per LOAD_REPORT_MS: its
 * load figures may lag by that much (calls last seconds), and under load one RPC carries many
 * calls instead of two RPCs per call. A failed report is retried with the next batch. `send`
 * answers undefined when there is nowhere to send (an unconfigured instance): the batch is dropped.
 */
export class LoadReporter {
  private batch: { started: { callId: string; atS: number }[]; finished: string[] } = { started: [], finished: [] };
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly send: Send) {}

  started(callId: string, atS: number): void {
    this.batch.started.push({ callId, atS });
    this.schedule();
  }

  finished(callId: string): void {
    this.batch.finished.push(callId);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const batch = this.batch;
      this.batch = { started: [], finished: [] };
      if (batch.started.length + batch.finished.length === 0) return;
      this.send(batch.started, batch.finished)?.catch(() => {
        this.batch.started.unshift(...batch.started);
        this.batch.finished.unshift(...batch.finished);
        this.schedule();
      });
    }, LOAD_REPORT_MS);
  }
}
