/** Plain binary min-heap for items that never leave early (the simulator's step events). */
export class MinHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = a[p];
      if (parent === undefined || !this.less(item, parent)) break;
      a[i] = parent;
      i = p;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    let i = 0;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const left = a[l];
      const right = a[l + 1];
      let c = l;
      let child = left;
      if (right !== undefined && left !== undefined && this.less(right, left)) {
        c = l + 1;
        child = right;
      }
      if (child === undefined || !this.less(child, last)) break;
      a[i] = child;
      i = c;
    }
    a[i] = last;
    return top;
  }
}
