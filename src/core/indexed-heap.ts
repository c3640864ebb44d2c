/**
 * Binary min-heap with an id index: O(log n) push, pop and remove-by-id, O(1) lookup.
 * Used for every per-instance call queue and for the simulator's event list, so a call
 * can leave a queue (cancelled, re-dispatched, drained) without a linear scan.
 */
export class IndexedHeap<T> {
  private readonly items: T[] = [];
  private readonly pos = new Map<string, number>();

  constructor(
    private readonly less: (a: T, b: T) => boolean,
    private readonly idOf: (item: T) => string,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(id: string): boolean {
    return this.pos.has(id);
  }

  get(id: string): T | undefined {
    const i = this.pos.get(id);
    return i === undefined ? undefined : this.items[i];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const id = this.idOf(item);
    if (this.pos.has(id)) throw new Error(`IndexedHeap: duplicate id ${id}`);
    this.items.push(item);
    this.pos.set(id, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top === undefined) return undefined;
    this.removeAt(0);
    return top;
  }

  remove(id: string): T | undefined {
    const i = this.pos.get(id);
    if (i === undefined) return undefined;
    const item = this.items[i];
    this.removeAt(i);
    return item;
  }

  /** Items in heap order (not sorted); for inspection and load sums. */
  values(): readonly T[] {
    return this.items;
  }

  private removeAt(i: number): void {
    const removed = this.items[i];
    if (removed === undefined) return;
    this.pos.delete(this.idOf(removed));
    const last = this.items.pop();
    if (last === undefined || i === this.items.length) return;
    this.items[i] = last;
    this.pos.set(this.idOf(last), i);
    this.down(i);
    this.up(i);
  }

  private up(start: number): void {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.lessAt(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(start: number): void {
    let i = start;
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < n && this.lessAt(l, best)) best = l;
      if (r < n && this.lessAt(r, best)) best = r;
      if (best === i) return;
      this.swap(i, best);
      i = best;
    }
  }

  private lessAt(a: number, b: number): boolean {
    const x = this.items[a];
    const y = this.items[b];
    return x !== undefined && y !== undefined && this.less(x, y);
  }

  private swap(a: number, b: number): void {
    const x = this.items[a];
    const y = this.items[b];
    if (x === undefined || y === undefined) return;
    this.items[a] = y;
    this.items[b] = x;
    this.pos.set(this.idOf(y), a);
    this.pos.set(this.idOf(x), b);
  }
}
