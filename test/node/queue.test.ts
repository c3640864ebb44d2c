import { describe, expect, it } from "vitest";
import { InstanceQueue } from "../../src/core/instance-queue";
import { edf } from "../../src/core/queue/edf";
import { fcfs } from "../../src/core/queue/fcfs";
import { leastLaxity } from "../../src/core/queue/least-laxity";
import type { QueuePolicy } from "../../src/core/queue/types";
import { call } from "./helpers";

// Three calls: (deadline, estimate) = A (20, 2), B (15, 1), C (21, 8). Laxity keys D - t̂: A 18, B 14, C 13.
const entries = [
  { c: call("A", { deadlineS: 20 }), est: 2, t: 0 },
  { c: call("B", { deadlineS: 15 }), est: 1, t: 1 },
  { c: call("C", { deadlineS: 21 }), est: 8, t: 2 },
];

function order(policy: QueuePolicy): string[] {
  const q = new InstanceQueue(policy);
  for (const e of entries) q.push(e.c, e.est, e.t);
  const out: string[] = [];
  for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x.call.id);
  return out;
}

describe("queue policies", () => {
  it("orders by arrival, deadline and laxity", () => {
    expect(order(fcfs)).toEqual(["A", "B", "C"]);
    expect(order(edf)).toEqual(["B", "A", "C"]);
    expect(order(leastLaxity)).toEqual(["C", "B", "A"]);
  });

  it("breaks ties first come, first served", () => {
    const q = new InstanceQueue(leastLaxity);
    q.push(call("x", { deadlineS: 10 }), 2, 0);
    q.push(call("y", { deadlineS: 11 }), 3, 1);
    q.push(call("z", { deadlineS: 9 }), 1, 2);
    expect([q.pop()?.call.id, q.pop()?.call.id, q.pop()?.call.id]).toEqual(["x", "y", "z"]);
  });

  it("removes a queued call by id", () => {
    const q = new InstanceQueue(edf);
    for (const e of entries) q.push(e.c, e.est, e.t);
    expect(q.remove("B")?.call.id).toBe("B");
    expect(q.remove("B")).toBeUndefined();
    expect(q.size).toBe(2);
    expect(q.pop()?.call.id).toBe("A");
  });
});
