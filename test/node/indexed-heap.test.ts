import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IndexedHeap } from "../../src/core/indexed-heap";
import { MinHeap } from "../../src/core/min-heap";

interface Item {
  id: string;
  key: number;
}
const newHeap = () => new IndexedHeap<Item>((a, b) => a.key < b.key || (a.key === b.key && a.id < b.id), (x) => x.id);

describe("IndexedHeap", () => {
  it("pops in key order and removes by id", () => {
    const h = newHeap();
    for (const [id, key] of [["a", 5], ["b", 1], ["c", 3], ["d", 4], ["e", 2]] as const) h.push({ id, key });
    expect(h.remove("c")?.key).toBe(3);
    expect(h.remove("c")).toBeUndefined();
    expect(h.has("c")).toBe(false);
    expect(h.get("d")?.key).toBe(4);
    const out: string[] = [];
    for (let x = h.pop(); x !== undefined; x = h.pop()) out.push(x.id);
    expect(out).toEqual(["b", "e", "d", "a"]);
    expect(h.size).toBe(0);
  });

  it("rejects a duplicate id", () => {
    const h = newHeap();
    h.push({ id: "a", key: 1 });
    expect(() => h.push({ id: "a", key: 2 })).toThrow(/duplicate/);
  });

  it("matches a sorted list under any mix of push, pop and remove", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("push" as const), key: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ kind: fc.constant("pop" as const) }),
      fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const h = newHeap();
        const model: Item[] = [];
        let n = 0;
        const cmp = (a: Item, b: Item) => a.key - b.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
        for (const o of ops) {
          if (o.kind === "push") {
            const item = { id: `i${String(n++).padStart(4, "0")}`, key: o.key };
            h.push(item);
            model.push(item);
          } else if (o.kind === "pop") {
            model.sort(cmp);
            expect(h.pop()?.id).toBe(model.shift()?.id);
          } else if (model.length > 0) {
            const victim = model[o.pick % model.length];
            if (victim === undefined) continue;
            expect(h.remove(victim.id)?.id).toBe(victim.id);
            model.splice(model.indexOf(victim), 1);
          }
          expect(h.size).toBe(model.length);
        }
      }),
    );
  });
});

describe("MinHeap", () => {
  it("pops ascending", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true })), (xs) => {
        const h = new MinHeap<number>((a, b) => a < b);
        for (const x of xs) h.push(x);
        const out: number[] = [];
        for (let x = h.pop(); x !== undefined; x = h.pop()) out.push(x);
        expect(out).toEqual([...xs].sort((a, b) => a - b));
      }),
    );
  });
});
