import type { Socket } from 'node:net';
import { frameHeader } from './frame.ts';

/** Queued frame bytes that are written at once rather than at the end of the event-loop turn. */
const FLUSH_AT = 256 * 1024;

/**
 * The sending side of a session's socket. Frames queued during one event-loop
 * turn go out in one corked write, so concurrent streams share syscalls; past
 * FLUSH_AT bytes they go at once. While the socket's buffer is full, stream
 * writes are acknowledged only once it drains (backpressure to the source).
 */
export class FrameWriter {
  readonly #socket: Socket;
  #queue: Buffer[] = [];
  #queued = 0;
  #flushScheduled = false;
  #congested = false;
  #drainWaiters: Array<() => void> = [];

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('drain', () => this.release());
  }

  send(type: number, id: number, payload?: Buffer): void {
    const length = payload?.length ?? 0;
    this.#queue.push(frameHeader(type, id, length));
    if (length) this.#queue.push(payload!);
    this.#queued += 9 + length;
    if (this.#queued >= FLUSH_AT) this.flush();
    else if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        this.flush();
      });
    }
  }

  flush(): void {
    if (this.#queue.length === 0 || this.#socket.destroyed) return;
    const queue = this.#queue;
    this.#queue = [];
    this.#queued = 0;
    this.#socket.cork();
    let ok = true;
    for (const buffer of queue) ok = this.#socket.write(buffer);
    this.#socket.uncork();
    if (!ok) this.#congested = true;
  }

  /** Calls `done` now, or once the socket drains if its buffer is full. */
  whenWritable(done: () => void): void {
    if (this.#congested) this.#drainWaiters.push(done);
    else done();
  }

  /** The socket drained (or is gone): every waiting writer goes on. */
  release(): void {
    this.#congested = false;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const done of waiters) done();
  }
}
