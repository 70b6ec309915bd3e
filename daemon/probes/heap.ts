/** A binary min-heap of due times: the scheduler's one queue for every resource. */
export interface HeapItem {
  due: number;
  id: number;
  version: number;
}

export class DueHeap {
  private readonly items: HeapItem[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): HeapItem | undefined {
    return this.items[0];
  }

  push(item: HeapItem): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent].due <= item.due) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = item;
  }

  pop(): HeapItem | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const child = r < a.length && a[r].due < a[l].due ? r : l;
        if (a[child].due >= last.due) break;
        a[i] = a[child];
        i = child;
      }
      a[i] = last;
    }
    return top;
  }
}
