import { describe, expect, it } from "vitest";
import { lastEventId, sseFrame, WorkflowEventDataSchema } from "../../src/core/workflow-events";

describe("progress events as Server-Sent Events", () => {
  it("formats an event as one frame: id, event, one data line", () => {
    const data = WorkflowEventDataSchema.parse({ type: "correction_round", atMs: 1, round: 1, candidate: 0, sql: "SELECT\n1", status: "error", error: "no such column:\nnme" });
    const frame = sseFrame({ seq: 7, data });
    expect(frame).toBe(`id: 7\nevent: correction_round\ndata: ${JSON.stringify(data)}\n\n`);
    expect(frame.split("\n")).toHaveLength(5);
  });

  it("takes the Last-Event-ID header before the query, 0 without either, and refuses what is not a decimal id", () => {
    expect(lastEventId(undefined, undefined)).toEqual({ ok: true, value: 0 });
    expect(lastEventId("12", "3")).toEqual({ ok: true, value: 12 });
    expect(lastEventId(undefined, "3")).toEqual({ ok: true, value: 3 });
    for (const bad of ["", "x", "-1", "1.5", "0x10", "1e3", "9".repeat(16)]) expect(lastEventId(bad, undefined).ok, bad).toBe(false);
  });

  it("refuses an event whose payload does not match its type", () => {
    expect(WorkflowEventDataSchema.safeParse({ type: "call_failed", atMs: 1, callId: "c", instanceId: "i", dispatch: 0, error: { code: "x", message: "y" }, willRetry: false, evacuated: false }).success).toBe(false);
  });
});
