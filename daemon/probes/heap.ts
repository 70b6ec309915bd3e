/** One item of the heap: when, which resource, and the version of its schedule it was pushed for. */
export interface HeapItem {
  due: number;
  id: number;
  version: number;
}

/**
 * A binary min-heap of due times: the scheduler's one queue for every resource. Items live in
 * three parallel typed arrays (20 bytes an item) rather than as one object each (about 70 bytes
 * with its boxed due time), and a push or pop allocates nothing: at a million resources the heap
 * is a million items, and it turns over thousands of times a second.
 */
export class DueHeap {
  #due = new Float64Array(1024);
  #id = new Float64Array(1024);
  #version = new Uint32Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The earliest due time (Infinity when empty), its resource and version. */
  peekDue(): number {
    return this.#size ? this.#due[0] : Number.POSITIVE_INFINITY;
  }
  peekId(): number {
    return this.#id[0];
  }
  peekVersion(): number {
    return this.#version[0];
  }

  peek(): HeapItem | undefined {
    return this.#size ? { due: this.#due[0], id: this.#id[0], version: this.#version[0] } : undefined;
  }

  push(item: HeapItem): void {
    this.add(item.due, item.id, item.version);
  }

  add(due: number, id: number, version: number): void {
    if (this.#size === this.#due.length) this.#grow();
    const d = this.#due;
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (d[parent] <= due) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#set(i, due, id, version);
  }

  /** Drops the earliest item. */
  pop(): void {
    if (this.#size === 0) return;
    const last = --this.#size;
    if (last === 0) return;
    const d = this.#due;
    const due = d[last];
    const id = this.#id[last];
    const version = this.#version[last];
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      const child = r < last && d[r] < d[l] ? r : l;
      if (d[child] >= due) break;
      this.#move(child, i);
      i = child;
    }
    this.#set(i, due, id, version);
  }

  #move(from: number, to: number): void {
    this.#due[to] = this.#due[from];
    this.#id[to] = this.#id[from];
    this.#version[to] = this.#version[from];
  }

  #set(i: number, due: number, id: number, version: number): void {
    this.#due[i] = due;
    this.#id[i] = id;
    this.#version[i] = version;
  }

  #grow(): void {
    const size = this.#due.length * 2;
    const due = new Float64Array(size);
    due.set(this.#due);
    const id = new Float64Array(size);
    id.set(this.#id);
    const version = new Uint32Array(size);
    version.set(this.#version);
    [this.#due, this.#id, this.#version] = [due, id, version];
  }
}
