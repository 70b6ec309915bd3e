import type { Socket } from 'node:net';
import { FRAME, frameHeader } from './frame.ts';

/** Queued frame bytes that are written at once rather than at the end of the event-loop turn. */
const FLUSH_AT = 256 * 1024;
/** What one queued frame costs beyond its bytes (the header Buffer, the socket's write request). */
const FRAME_OVERHEAD = 64;
const EMPTY = Buffer.alloc(0);

/** Limits on what a peer that does not read can make us hold (see MuxSession). */
export interface WriterLimits {
  /** Control frames (all but DATA) queued since the socket last drained, in bytes plus overhead, before `onBacklog`. */
  controlSoftCap: number;
  /** Unsent bytes of every kind (ours and the socket's) before `onOverflow`. */
  hardCap: number;
  /** The control backlog passed the soft cap: stop reading from the peer. */
  onBacklog(): void;
  /** The socket drained: reading may go on. */
  onDrain(): void;
  /** The hard cap is passed: the session must go. */
  onOverflow(bytes: number): void;
}

/**
 * The sending side of a session's socket. Frames queued during one event-loop
 * turn go out in one corked write, so concurrent streams share syscalls; past
 * FLUSH_AT bytes they go at once. While the socket's buffer is full, stream
 * writes are acknowledged only once it drains (backpressure to the source).
 * DATA is bounded by flow control; control frames are not (a PONG per PING, a
 * RST per refused OPEN), so their backlog is counted apart: `controlBacklog`
 * is what was queued since the socket's buffer was last empty.
 */
export class FrameWriter {
  readonly #socket: Socket;
  readonly #limits: WriterLimits | undefined;
  #queue: Buffer[] = [];
  #queued = 0;
  #flushScheduled = false;
  #congested = false;
  #drainWaiters: Array<() => void> = [];
  #controlBacklog = 0;
  #overLimit = false;

  constructor(socket: Socket, limits?: WriterLimits) {
    this.#socket = socket;
    this.#limits = limits;
    socket.on('drain', () => this.release());
  }

  /** Unsent bytes: queued here and buffered in the socket. */
  get backlog(): number {
    return this.#queued + this.#socket.writableLength;
  }

  get controlBacklog(): number {
    return this.#controlBacklog;
  }

  send(type: number, id: number, payload?: Buffer): void {
    const length = payload?.length ?? 0;
    this.#queue.push(frameHeader(type, id, length));
    if (length) this.#queue.push(payload!);
    this.#queued += 9 + length;
    if (type !== FRAME.DATA && this.#limits) {
      this.#controlBacklog += 9 + length + FRAME_OVERHEAD;
      if (this.#controlBacklog > this.#limits.controlSoftCap && !this.#overLimit) {
        this.#overLimit = true;
        this.#limits.onBacklog();
      }
    }
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
    // Over the soft cap, the peer is not read until this is out: its callback says so even when no 'drain' comes.
    if (this.#overLimit) this.#socket.write(EMPTY, () => { if (this.#socket.writableLength === 0) this.#drained(); });
    this.#socket.uncork();
    if (!ok) this.#congested = true;
    const buffered = this.#socket.writableLength;
    if (buffered === 0) this.#drained();
    else if (this.#limits && buffered > this.#limits.hardCap) this.#limits.onOverflow(buffered);
  }

  /** Calls `done` now, or once the socket drains if its buffer is full. */
  whenWritable(done: () => void): void {
    if (this.#congested) this.#drainWaiters.push(done);
    else done();
  }

  /** The socket drained (or is gone): every waiting writer goes on. */
  release(): void {
    this.#congested = false;
    if (this.#socket.writableLength === 0) this.#drained();
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const done of waiters) done();
  }

  #drained(): void {
    this.#controlBacklog = this.#queued;
    if (!this.#overLimit) return;
    this.#overLimit = false;
    this.#limits?.onDrain();
  }
}
