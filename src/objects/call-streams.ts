/**
 * Live text of the calls a GpuInstanceObject runs, fanned out to subscribers (the gateway's
 * OpenAI-compatible endpoint) as newline-delimited JSON: `{"delta":"..."}` events, then exactly one
 * end event, `{"done":true,"usage":{...},"finishReason":"..."}` or `{"error":{"code","message","status"?}}`.
 *
 * Why pull-based: each subscriber's stream is read in the subscribe request's own context, and the
 * forward (another request's context) only appends text and wakes waiters. Nothing is written into a
 * stream from a foreign context, and a slow reader gets the text coalesced instead of an ever-growing
 * queue of events.
 *
 * Entries live in memory only: a Durable Object restart ends every open stream (the reader sees the
 * stream break, which the gateway turns into an error), though the call itself is re-admitted and
 * its workflow still completes. A subscriber that comes after the call started gets what was
 * written so far as its first delta; one that comes while the call is queued waits.
 */
import { z } from "zod";

export const CallStreamEventSchema = z.union([
  z.object({ delta: z.string() }),
  z.object({
    done: z.literal(true),
    usage: z.object({ promptTokens: z.number(), completionTokens: z.number() }),
    finishReason: z.string(),
  }),
  z.object({ error: z.object({ code: z.string(), message: z.string(), status: z.number().optional() }) }),
]);
export type CallStreamEvent = z.infer<typeof CallStreamEventSchema>;
export type CallStreamEnd = Exclude<CallStreamEvent, { delta: string }>;

/** How long a finished call's text stays for a subscriber that arrives late (real milliseconds). */
const RETAIN_MS = 60_000;
/** How long a subscription to a call this instance does not hold waits for it to show up. */
const UNKNOWN_CALL_GRACE_MS = 10_000;

interface Entry {
  /** The call's dispatch (core/call-retry): a re-sent call starts a new entry, its earlier attempt's text is not its text. */
  dispatch: number;
  text: string;
  end: CallStreamEnd | undefined;
  wake: (() => void)[];
  timer: ReturnType<typeof setTimeout> | undefined;
}

const encoder = new TextEncoder();
const line = (e: CallStreamEvent): Uint8Array => encoder.encode(`${JSON.stringify(e)}\n`);

export class CallStreams {
  private readonly entries = new Map<string, Entry>();

  /** Starts keeping a call's text, so a late subscriber gets all of it; without it only subscribed calls keep text. */
  open(callId: string, dispatch = 0): void {
    const e = this.entry(callId, dispatch);
    if (e.end === undefined) this.clearTimer(e);
  }

  delta(callId: string, text: string): void {
    const e = this.entries.get(callId);
    if (e === undefined || e.end !== undefined) return;
    this.clearTimer(e);
    e.text += text;
    this.notify(e);
  }

  /** The call's last event; later ones are ignored (a late answer after the watchdog gave up). */
  end(callId: string, event: CallStreamEnd): void {
    const e = this.entries.get(callId);
    if (e === undefined || e.end !== undefined) return;
    e.end = event;
    this.clearTimer(e);
    e.timer = setTimeout(() => this.entries.delete(callId), RETAIN_MS);
    this.notify(e);
  }

  /**
   * `held`: the instance has the call queued or running; otherwise it gets a grace period to arrive. `dispatch`:
   * the attempt the subscriber follows; an entry of an earlier one is not it (a re-send to this same instance).
   */
  subscribe(callId: string, held: boolean, dispatch = 0): ReadableStream<Uint8Array> {
    const existed = (this.entries.get(callId)?.dispatch ?? -1) >= dispatch;
    const e = this.entry(callId, dispatch);
    if (!existed && !held) {
      e.timer = setTimeout(() => this.end(callId, { error: { code: "not_found", message: `call ${callId} is not on this instance` } }), UNKNOWN_CALL_GRACE_MS);
    }
    let sent = 0;
    let closed = false;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        while (!closed && sent === e.text.length && e.end === undefined) await new Promise<void>((r) => e.wake.push(r));
        if (closed) return;
        if (sent < e.text.length) {
          controller.enqueue(line({ delta: e.text.slice(sent) }));
          sent = e.text.length;
          return;
        }
        if (e.end !== undefined) {
          controller.enqueue(line(e.end));
          controller.close();
          closed = true;
        }
      },
      cancel: () => {
        closed = true;
        this.notify(e);
      },
    });
  }

  private entry(callId: string, dispatch: number): Entry {
    const old = this.entries.get(callId);
    if (old !== undefined && old.dispatch >= dispatch) return old;
    if (old !== undefined) {
      // Its subscribers see it end (a re-send supersedes an attempt whose end this instance never saw).
      if (old.end === undefined) this.end(callId, { error: { code: "superseded", message: "the call was sent again" } });
      this.clearTimer(old);
    }
    const e: Entry = { dispatch, text: "", end: undefined, wake: [], timer: undefined };
    this.entries.set(callId, e);
    return e;
  }

  private clearTimer(e: Entry): void {
    if (e.timer !== undefined) clearTimeout(e.timer);
    e.timer = undefined;
  }

  private notify(e: Entry): void {
    const waiters = e.wake;
    e.wake = [];
    for (const w of waiters) w();
  }
}
