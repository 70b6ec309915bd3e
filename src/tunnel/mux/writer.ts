import type { Socket } from 'node:net';
import { FRAME, HEADER_SIZE } from './frame.ts';

/** Queued frame bytes that are written at once rather than at the end of the event-loop turn. */
const FLUSH_AT = 256 * 1024;
/** What one queued frame costs beyond its bytes (the header Buffer, the socket's write request). */
const FRAME_OVERHEAD = 64;
/** Payloads up to this size are copied next to their header; larger ones are written by reference. */
const COPY_MAX = 4 * 1024;
/** The buffer small frames are copied into; it starts over each time the socket has taken every byte. */
const ARENA_SIZE = 64 * 1024;
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
 * turn go out together, so concurrent streams share syscalls; past FLUSH_AT
 * bytes they go at once. Headers and small payloads are copied into one
 * buffer (the arena), so a small exchange is one socket write of one buffer
 * rather than a corked write per header and per payload; large payloads are
 * written by reference between arena slices, in one writev.
 * While the socket's buffer is full, stream writes are acknowledged only once
 * it drains (backpressure to the source). DATA is bounded by flow control;
 * control frames are not (a PONG per PING, a RST per refused OPEN), so their
 * backlog is counted apart: `controlBacklog` is what was queued since the
 * socket's buffer was last empty.
 */
export class FrameWriter {
  readonly #socket: Socket;
  readonly #limits: WriterLimits | undefined;
  /** Chunks ready to write, in order: arena slices and large payloads. */
  #chunks: Buffer[] = [];
  #queued = 0;
  /** Where frames are copied; `#start` is where the slice not yet in `#chunks` begins. */
  #arena: Buffer | undefined;
  #start = 0;
  #fill = 0;
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
    const copied = length <= COPY_MAX ? length : 0;
    let arena = this.#arena;
    if (!arena || this.#fill + HEADER_SIZE + copied > arena.length) arena = this.#newArena(HEADER_SIZE + copied);
    let at = this.#fill;
    arena.writeUInt32BE(length, at);
    arena[at + 4] = type;
    arena.writeUInt32BE(id, at + 5);
    at += HEADER_SIZE;
    if (copied) at += payload!.copy(arena, at);
    this.#fill = at;
    if (length && !copied) {
      this.#seal();
      this.#chunks.push(payload!);
    }
    this.#queued += HEADER_SIZE + length;
    if (type !== FRAME.DATA && this.#limits) {
      this.#controlBacklog += HEADER_SIZE + length + FRAME_OVERHEAD;
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
    this.#seal();
    if (this.#chunks.length === 0 || this.#socket.destroyed) return;
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#queued = 0;
    const socket = this.#socket;
    let ok: boolean;
    if (chunks.length === 1 && !this.#overLimit) ok = socket.write(chunks[0]);
    else {
      socket.cork();
      ok = true;
      for (const chunk of chunks) ok = socket.write(chunk);
      // Over the soft cap, the peer is not read until this is out: its callback says so even when no 'drain' comes.
      if (this.#overLimit) socket.write(EMPTY, () => { if (socket.writableLength === 0) this.#drained(); });
      socket.uncork();
    }
    if (!ok) this.#congested = true;
    const buffered = socket.writableLength;
    if (buffered === 0) {
      // The kernel took every byte: the arena is free again (the socket keeps slices of it only while it waits).
      this.#start = this.#fill = 0;
      this.#drained();
    } else if (this.#limits && buffered > this.#limits.hardCap) this.#limits.onOverflow(buffered);
    // Otherwise the socket may hold slices of the arena: later frames go after them, never over them.
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

  /** Moves the arena's bytes written since the last seal into the chunks to write. */
  #seal(): void {
    if (this.#fill === this.#start) return;
    this.#chunks.push(this.#arena!.subarray(this.#start, this.#fill));
    this.#start = this.#fill;
  }

  /** A fresh arena when the current one is full (the socket may still hold slices of it). */
  #newArena(need: number): Buffer {
    this.#seal();
    const arena = Buffer.allocUnsafeSlow(Math.max(ARENA_SIZE, need));
    this.#arena = arena;
    this.#start = this.#fill = 0;
    return arena;
  }

  #drained(): void {
    this.#controlBacklog = this.#queued;
    if (!this.#overLimit) return;
    this.#overLimit = false;
    this.#limits?.onDrain();
  }
}
