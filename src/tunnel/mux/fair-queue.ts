/**
 * The DATA waiting to be sent, one queue per stream, served fairly: start-time
 * fair queueing (SFQ, Goyal et al. 1996). Each queued payload gets a start
 * tag, the later of the queue's virtual time and its stream's last finish tag,
 * and a finish tag, its start plus its length; the payload with the smallest
 * start goes first (the smaller finish on a tie), and the virtual time is the
 * start of the payload last served. A stream that had nothing queued so
 * starts level with the ones keeping the socket busy and wins on its finish
 * tag: its small answer goes before their next frames, while they share the
 * rest evenly. So one stream's megabytes never sit in front of another's
 * first bytes (without it, 1,000 unread answers of one route held another route
 * of the same agent for up to 0.8 s).
 * Tried first: round robin with FQ-CoDel's "new flows first" (a stream whose
 * writes wait for its queue to empty looked new at every write, and a new
 * stream waited behind all of them), and self-clocked fair queueing (ordered
 * by finish tag: a new stream waits for every frame queued in the same round).
 */

interface Item {
  /** A DATA payload, or undefined for the stream's FIN. */
  payload: Buffer | undefined;
  start: number;
  finish: number;
}

/** One stream's queue. */
export interface Flow {
  readonly id: number;
  items: Item[];
  /** Index of the first item not yet taken. */
  head: number;
  /** Payload bytes queued. */
  bytes: number;
  /** The finish tag of the stream's last queued item. */
  last: number;
  /** Position in the heap, -1 while empty. */
  at: number;
  /** Write callbacks waiting for this flow's queue to go down. */
  waiters: Array<() => void>;
}

export class FairQueue {
  readonly #flows = new Map<number, Flow>();
  /** Flows with something queued, a min-heap on the tag of their first item. */
  readonly #heap: Flow[] = [];
  #virtual = 0;
  /** Payload bytes queued over all flows. */
  bytes = 0;

  get empty(): boolean {
    return this.#heap.length === 0;
  }

  /** The flow of stream `id`, if it has anything queued or waiting. */
  get(id: number): Flow | undefined {
    return this.#flows.get(id);
  }

  /** Queues a DATA payload, or (undefined) the stream's FIN, behind what the stream has queued. */
  push(id: number, payload: Buffer | undefined): Flow {
    let flow = this.#flows.get(id);
    if (!flow) {
      flow = { id, items: [], head: 0, bytes: 0, last: 0, at: -1, waiters: [] };
      this.#flows.set(id, flow);
    }
    const length = payload?.length ?? 0;
    const previous = flow.items[flow.items.length - 1];
    if (!payload && previous) {
      // A FIN costs nothing: it goes right after the stream's last DATA, with its tags.
      flow.items.push({ payload, start: previous.start, finish: previous.finish });
    } else {
      const start = Math.max(this.#virtual, flow.last);
      flow.last = start + length;
      flow.items.push({ payload, start, finish: flow.last });
    }
    flow.bytes += length;
    this.bytes += length;
    if (flow.at < 0) this.#insert(flow);
    return flow;
  }

  /**
   * The next thing to send: a DATA payload of at most `limit` bytes (a longer one is split, its
   * rest kept first in its stream's queue), or a FIN (`payload` undefined). `undefined` when
   * nothing is queued, or `limit` is 0 and the first item is DATA.
   */
  next(limit: number): { flow: Flow; payload: Buffer | undefined } | undefined {
    const flow = this.#heap[0];
    if (!flow) return undefined;
    const item = flow.items[flow.head];
    let payload = item.payload;
    if (payload && limit <= 0) return undefined;
    this.#virtual = item.start;
    if (payload && payload.length > limit) {
      item.payload = payload.subarray(limit);
      payload = payload.subarray(0, limit);
    } else {
      flow.items[flow.head++] = undefined as unknown as Item;
      if (flow.head === flow.items.length) {
        flow.items = [];
        flow.head = 0;
      }
    }
    const length = payload?.length ?? 0;
    flow.bytes -= length;
    this.bytes -= length;
    // A stream's queue is kept (with its last finish tag) until its FIN is sent or it is reset.
    if (!payload) this.#flows.delete(flow.id);
    if (flow.items.length === 0) this.#remove();
    else this.#down(0);
    return { flow, payload };
  }

  /** Whether stream `id` has anything queued. */
  queued(id: number): boolean {
    return (this.#flows.get(id)?.at ?? -1) >= 0;
  }

  /** Drops the stream's queue (it was reset, or ends with nothing queued); returns the DATA bytes that will not be sent. */
  discard(id: number): number {
    const flow = this.#flows.get(id);
    if (!flow) return 0;
    const dropped = flow.bytes;
    this.bytes -= dropped;
    flow.items = [];
    flow.head = 0;
    flow.bytes = 0;
    if (flow.at >= 0) {
      const last = this.#heap.pop()!;
      if (last !== flow) {
        this.#heap[flow.at] = last;
        last.at = flow.at;
        this.#down(last.at);
        this.#up(last.at);
      }
      flow.at = -1;
    }
    this.#flows.delete(id);
    return dropped;
  }

  /** Every flow's waiters, for when the session goes. */
  takeAllWaiters(): Array<() => void> {
    const all: Array<() => void> = [];
    for (const flow of this.#flows.values()) all.push(...flow.waiters.splice(0));
    return all;
  }

  /** Whether flow a's first item goes before flow b's. */
  #before(a: Flow, b: Flow): boolean {
    const x = a.items[a.head];
    const y = b.items[b.head];
    return x.start < y.start || (x.start === y.start && x.finish < y.finish);
  }

  #insert(flow: Flow): void {
    flow.at = this.#heap.length;
    this.#heap.push(flow);
    this.#up(flow.at);
  }

  /** Removes the heap's first flow. */
  #remove(): void {
    const first = this.#heap[0];
    const last = this.#heap.pop()!;
    first.at = -1;
    if (last !== first) {
      this.#heap[0] = last;
      last.at = 0;
      this.#down(0);
    }
  }

  #up(i: number): void {
    const heap = this.#heap;
    const flow = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(flow, heap[parent])) break;
      heap[i] = heap[parent];
      heap[i].at = i;
      i = parent;
    }
    heap[i] = flow;
    flow.at = i;
  }

  #down(i: number): void {
    const heap = this.#heap;
    const flow = heap[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && this.#before(heap[child + 1], heap[child])) child++;
      if (!this.#before(heap[child], flow)) break;
      heap[i] = heap[child];
      heap[i].at = i;
      i = child;
    }
    heap[i] = flow;
    flow.at = i;
  }
}
