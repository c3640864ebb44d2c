/**
 * A call's events as the OpenAI-compatible endpoint reads them: the instance's newline-delimited stream
 * (call-streams.ts), one event at a time, and the call followed to another instance when it fails over.
 *
 * Why follow only before the first text: a call that failed before writing anything (refused, a 5xx, a
 * timeout in the queue, an instance drained or restarted) runs again elsewhere with nothing lost, so the
 * client sees one answer. Text already sent cannot be taken back, and the retry writes other text: then
 * the failure reaches the client, though the workflow still completes.
 */
import { CallStreamEventSchema, type CallStreamEnd, type CallStreamEvent } from "../objects/call-streams";

/** Where a call is now: the workflow's status, the call's dispatch number and instance (null while being placed). */
export type CallPlace = { ok: true; value: { status: string; dispatch: number; instanceId: string | null } } | { ok: false; error: { code: string; message: string } };

/** How long the endpoint waits for a failed call to be placed again before it answers the failure (real ms). */
const RELOCATE_WAIT_MS = 15_000;
const RELOCATE_POLL_MS = 100;

/** The instance's newline-delimited events, one at a time; a stream that breaks or ends early becomes an error event. */
export class CallEvents {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private ended = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }

  async next(): Promise<CallStreamEvent> {
    const lost = (why: string): CallStreamEnd => ({ error: { code: "stream_lost", message: `the call's stream from its instance ${why}` } });
    for (;;) {
      const cut = this.buffer.indexOf("\n");
      if (cut >= 0) {
        const line = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 1);
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return lost("sent a malformed event");
        }
        const e = CallStreamEventSchema.safeParse(parsed);
        return e.success ? e.data : lost("sent a malformed event");
      }
      if (this.ended) return lost("ended before the call did (the instance restarted?)");
      try {
        const { value, done } = await this.reader.read();
        if (done) this.ended = true;
        else this.buffer += this.decoder.decode(value, { stream: true });
      } catch (e) {
        this.ended = true;
        return lost(`broke: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  cancel(): void {
    this.reader.cancel().catch(() => {});
  }
}

export class CallFollower {
  private events: CallEvents;
  private wrote = false;
  private cancelled = false;

  constructor(
    stream: ReadableStream<Uint8Array>,
    private dispatch: number,
    private readonly subscribe: (instanceId: string, dispatch: number) => Promise<ReadableStream<Uint8Array>>,
    private readonly place: () => Promise<CallPlace>,
  ) {
    this.events = new CallEvents(stream);
  }

  async next(): Promise<CallStreamEvent> {
    for (;;) {
      const e = await this.events.next();
      if ("delta" in e) this.wrote = true;
      if (!("error" in e) || this.wrote || this.cancelled) return e;
      const moved = await this.relocate();
      if (moved === undefined) return e;
      this.dispatch = moved.dispatch;
      this.events = new CallEvents(await this.subscribe(moved.instanceId, moved.dispatch));
    }
  }

  cancel(): void {
    this.cancelled = true;
    this.events.cancel();
  }

  /** The call's next dispatch once the workflow has placed it; undefined if the workflow ended or it takes too long. */
  private async relocate(): Promise<{ instanceId: string; dispatch: number } | undefined> {
    for (const end = Date.now() + RELOCATE_WAIT_MS; Date.now() < end && !this.cancelled; ) {
      const p = await this.place();
      if (!p.ok || (p.value.status !== "running" && p.value.status !== "queued")) return undefined;
      if (p.value.dispatch > this.dispatch && p.value.instanceId !== null) return { instanceId: p.value.instanceId, dispatch: p.value.dispatch };
      await new Promise((r) => setTimeout(r, RELOCATE_POLL_MS));
    }
    return undefined;
  }
}
