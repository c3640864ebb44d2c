/**
 * Timing on the server's clock: each measured request (or concurrency level) is bracketed by two
 * reads of /metrics and takes the growth of vLLM's histograms in between (calibrate-metrics.ts).
 */
import { type CalibrationClient, ServerError, type StreamTiming } from "./calibrate-client";
import { delta, hasRequestTimings, parseSnapshot, type Snapshot } from "./calibrate-metrics";

/** vLLM records a request's histograms as its output is processed, which may trail the last chunk the client read. */
const RECORD_WAIT_MS = 3000;
/** A request that shares the server with another client's is measured again with a fresh prompt. */
const ATTEMPTS = 3;

export interface ServerTimed {
  t: StreamTiming;
  ttftS: number;
  totalS: number;
  queueS: number | undefined;
}

export class ServerTimer {
  constructor(
    private readonly client: CalibrationClient,
    private readonly model: string,
    private readonly url: string,
  ) {}

  async snapshot(): Promise<Snapshot> {
    const text = await this.client.metricsText();
    return text === undefined ? {} : parseSnapshot(text, this.model);
  }

  /** Whether the server exports the per-request histograms (a real vLLM and the emulator do). */
  async available(): Promise<boolean> {
    return hasRequestTimings(await this.snapshot());
  }

  /** Waits until /metrics has recorded at least `n` more finished requests than `before`. */
  private async after(before: Snapshot, n: number): Promise<Snapshot> {
    const deadline = performance.now() + RECORD_WAIT_MS;
    for (;;) {
      const now = await this.snapshot();
      if ((delta(before, now, "e2e")?.count ?? 0) >= n && (delta(before, now, "ttft")?.count ?? 0) >= n) return now;
      if (performance.now() > deadline) throw new ServerError(`${this.url}/metrics did not record ${n} finished request(s) within ${RECORD_WAIT_MS / 1000} s; try --timing wall`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** One request, its TTFT and end-to-end latency as the server measured them. `prompt` is called per attempt. */
  async request(prompt: () => string, maxTokens: number): Promise<ServerTimed> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const before = await this.snapshot();
      const t = await this.client.stream(prompt(), maxTokens);
      const after = await this.after(before, 1);
      const ttft = delta(before, after, "ttft");
      const e2e = delta(before, after, "e2e");
      if (ttft?.count !== 1 || e2e?.count !== 1) continue;
      const queue = delta(before, after, "queue");
      return { t, ttftS: ttft.sum, totalS: e2e.sum, queueS: queue?.count === 1 ? queue.sum : undefined };
    }
    throw new ServerError(`${this.url}/metrics counted other requests during ${ATTEMPTS} measured ones: another client is using the server; calibrate it idle or use --timing wall`);
  }

  /**
   * `c` requests at once and their mean inter-token latency as the server measured it, or undefined
   * if it exports no inter-token histogram.
   */
  async concurrent(c: number, run: () => Promise<StreamTiming>): Promise<{ ts: StreamTiming[]; interTokenS: number | undefined }> {
    const before = await this.snapshot();
    const ts = await Promise.all(Array.from({ length: c }, run));
    const after = await this.after(before, c);
    if (delta(before, after, "e2e")?.count !== c) {
      throw new ServerError(`${this.url}/metrics counted other requests during the concurrency sweep: another client is using the server; calibrate it idle or use --timing wall`);
    }
    const itl = delta(before, after, "itl") ?? delta(before, after, "tpot");
    return { ts, interTokenS: itl !== undefined && itl.count > 0 ? itl.sum / itl.count : undefined };
  }
}
