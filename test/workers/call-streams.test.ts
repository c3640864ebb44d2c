import { describe, expect, it } from "vitest";
import { CallStreams, CallStreamEventSchema, type CallStreamEvent } from "../../src/objects/call-streams";

const DONE = { done: true as const, usage: { promptTokens: 3, completionTokens: 2 }, finishReason: "stop" };

/** Reads newline-delimited events from a subscription, one read at a time. */
function events(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  return {
    async next(): Promise<CallStreamEvent | "end"> {
      const { value, done } = await reader.read();
      if (done) return "end";
      return CallStreamEventSchema.parse(JSON.parse(decoder.decode(value).trim()));
    },
    cancel: () => reader.cancel(),
  };
}

describe("CallStreams: a call's live text fanned out to subscribers", () => {
  it("replays what was written before the subscription, then follows, then ends with one end event", async () => {
    const s = new CallStreams();
    s.open("c1");
    s.delta("c1", "SEL");
    s.delta("c1", "ECT");
    const sub = events(s.subscribe("c1", true));
    expect(await sub.next()).toEqual({ delta: "SELECT" });
    const pending = sub.next();
    s.delta("c1", " 1");
    expect(await pending).toEqual({ delta: " 1" });
    s.end("c1", DONE);
    s.end("c1", { error: { code: "upstream_timeout", message: "late" } }); // ignored: the call already ended
    s.delta("c1", "ignored");
    expect(await sub.next()).toEqual(DONE);
    expect(await sub.next()).toBe("end");
  });

  it("a call sent again to the same instance starts a new stream: its subscriber never sees the earlier attempt's end", async () => {
    const s = new CallStreams();
    s.open("c9", 0);
    const first = events(s.subscribe("c9", true, 0));
    s.end("c9", { error: { code: "upstream_error", message: "503" } });
    expect(await first.next()).toEqual({ error: { code: "upstream_error", message: "503" } });
    // The follower subscribes to dispatch 1 before the instance has it queued, then it arrives and runs.
    const second = events(s.subscribe("c9", false, 1));
    s.open("c9", 1);
    s.delta("c9", "ok");
    s.end("c9", DONE);
    expect(await second.next()).toEqual({ delta: "ok" });
    expect(await second.next()).toEqual(DONE);
    // A subscriber of the earlier dispatch, now, gets the current stream (nothing older is kept).
    expect(await events(s.subscribe("c9", false, 0)).next()).toEqual({ delta: "ok" });
  });

  it("gives a subscriber that arrives after the end the whole text and the end; two subscribers see the same", async () => {
    const s = new CallStreams();
    s.open("c2");
    const early = events(s.subscribe("c2", true));
    s.delta("c2", "a");
    s.delta("c2", "b");
    s.end("c2", DONE);
    const late = events(s.subscribe("c2", false));
    for (const sub of [early, late]) {
      expect(await sub.next()).toEqual({ delta: "ab" });
      expect(await sub.next()).toEqual(DONE);
      expect(await sub.next()).toBe("end");
    }
  });

  it("a queued call's subscriber waits; a call that never streamed text ends with its error; a replayed call keeps no text unsubscribed", async () => {
    const s = new CallStreams();
    const waiting = events(s.subscribe("queued", true));
    const first = waiting.next();
    s.end("queued", { error: { code: "cancelled", message: "the call's workflow was cancelled" } });
    expect(await first).toEqual({ error: { code: "cancelled", message: "the call's workflow was cancelled" } });
    s.delta("replayed", "tok tok"); // never opened, nobody subscribed: dropped
    s.end("replayed", DONE);
    const after = events(s.subscribe("replayed", true));
    const next = after.next();
    s.end("replayed", DONE);
    expect(await next).toEqual(DONE);
  });
});
