import type { Socket } from 'node:net';
import { FairQueue, type Flow } from './fair-queue.ts';
import { FRAME, HEADER_SIZE } from './frame.ts';

/** Queued frame bytes that are written at once rather than at the end of the event-loop turn. */
const FLUSH_AT = 256 * 1024;
/** What one queued frame costs beyond its bytes (the header Buffer, the socket's write request). */
const FRAME_OVERHEAD = 64;
/** Payloads up to this size are copied next to their header; larger ones are written by reference. */
const COPY_MAX = 4 * 1024;
/** The buffer small frames are copied into; it starts over each time the socket has taken every byte. */
const ARENA_SIZE = 64 * 1024;
/**
 * DATA is handed to the socket while it holds less than this: beyond, DATA waits in the fair queue,
 * where a new stream's frames can still go first. Larger costs latency to other streams, smaller
 * costs loop turns on bulk transfers (see DECISIONS.md, "Tunnel data plane").
 */
const SOCKET_BUDGET = 256 * 1024;
/**
 * DATA sent and not yet acknowledged by the peer's connection WINDOW (which it returns on receipt):
 * the bytes in the sockets' buffers on the way, which any new frame waits behind. The protocol's
 * connection window is larger (32 MiB); a sender keeping less of it in flight keeps its fair queue
 * in charge instead of the kernel's FIFO (loopback buffers grow to 32 MiB here).
 */
export const IN_FLIGHT_MAX = 8 * 1024 * 1024;
/** A stream's write is acknowledged (its source may go on) once its queue is down to this. */
const STREAM_QUEUE_LOW = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** Limits on what a peer that does not read can make us hold (see MuxSession). */
export interface WriterLimits {
  /** The peer's connection window: DATA in flight never passes it. */
  connectionWindow: number;
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
 * The sending side of a session's socket. Control frames (all but DATA and
 * FIN) go out first, in order; DATA and FIN wait in per-stream queues served
 * fairly (fair-queue.ts) and are handed to the socket only while it holds less
 * than SOCKET_BUDGET, so one stream's megabytes never sit in front of another
 * stream's first bytes. Frames queued during one event-loop turn go out
 * together, so concurrent streams share syscalls. Headers and small payloads
 * are copied into one buffer (the arena), so a small exchange is one socket
 * write of one buffer; large payloads are written by reference between arena
 * slices, in one writev.
 * A stream's write is acknowledged once its queue is short (backpressure to
 * the source). DATA is bounded by flow control; control frames are not (a
 * PONG per PING, a RST per refused OPEN), so their backlog is counted apart:
 * `controlBacklog` is what was queued since the socket's buffer was last empty.
 */
export class FrameWriter {
  readonly #socket: Socket;
  readonly #limits: WriterLimits | undefined;
  readonly #data = new FairQueue();
  /** Control frames not yet serialised: type, id, payload, in order. */
  #control: Array<{ type: number; id: number; payload: Buffer | undefined }> = [];
  #controlQueued = 0;
  /** Chunks ready to write, in order: arena slices and large payloads. */
  #chunks: Buffer[] = [];
  /** Where frames are copied; `#start` is where the slice not yet in `#chunks` begins. */
  #arena: Buffer | undefined;
  #start = 0;
  #fill = 0;
  #flushScheduled = false;
  /** A socket write is out whose callback flushes again (DATA is waiting for room). */
  #awaitingRoom = false;
  #controlBacklog = 0;
  #overLimit = false;
  /** DATA bytes sent that the peer has not returned as connection credit yet. */
  inFlight = 0;
  readonly #maxInFlight: number;

  constructor(socket: Socket, limits?: WriterLimits) {
    this.#socket = socket;
    this.#limits = limits;
    // Without limits (the writer alone, in tests) nothing returns credit: DATA is not held back.
    this.#maxInFlight = limits ? Math.min(IN_FLIGHT_MAX, limits.connectionWindow) : Infinity;
  }

  /** The peer returned connection credit: DATA waiting for it goes on. */
  credited(bytes: number): void {
    this.inFlight -= bytes;
    if (!this.#data.empty && !this.#awaitingRoom) this.flush();
  }

  /** Unsent bytes: queued here and buffered in the socket. */
  get backlog(): number {
    return this.#controlQueued + this.#data.bytes + this.#socket.writableLength;
  }

  get controlBacklog(): number {
    return this.#controlBacklog;
  }

  send(type: number, id: number, payload?: Buffer): void {
    if (type === FRAME.DATA) {
      this.#data.push(id, payload);
      return this.#queued();
    }
    // A FIN must not pass its stream's DATA.
    if (type === FRAME.FIN) {
      if (this.#data.queued(id)) {
        this.#data.push(id, undefined);
        return this.#queued();
      }
      this.discard(id); // nothing queued: the FIN goes with the control frames, the stream's queue is forgotten
    }
    const length = payload?.length ?? 0;
    this.#control.push({ type, id, payload });
    this.#controlQueued += HEADER_SIZE + length;
    if (this.#limits) {
      this.#controlBacklog += HEADER_SIZE + length + FRAME_OVERHEAD;
      if (this.#controlBacklog > this.#limits.controlSoftCap && !this.#overLimit) {
        this.#overLimit = true;
        this.#limits.onBacklog();
      }
    }
    this.#queued();
  }

  /** Drops the DATA (and FIN) queued for a stream that is reset; returns the DATA bytes not sent. */
  discard(id: number): number {
    const flow = this.#data.get(id);
    const dropped = this.#data.discard(id);
    if (flow) this.#wake(flow);
    return dropped;
  }

  /** Calls `done` once the stream's queue is short (at once if it is). */
  whenSent(id: number, done: () => void): void {
    const flow = this.#data.get(id);
    if (!flow || flow.bytes <= STREAM_QUEUE_LOW) done();
    else flow.waiters.push(done);
  }

  flush(): void {
    const socket = this.#socket;
    if (socket.destroyed) return;
    for (const { type, id, payload } of this.#control) this.#serialise(type, id, payload);
    this.#control = [];
    this.#controlQueued = 0;
    // DATA, fairly, while the socket has room (one frame at least when it is empty, or nothing would move).
    let room = SOCKET_BUDGET - socket.writableLength;
    while (room > 0 && !this.#awaitingRoom) {
      const next = this.#data.next(this.#maxInFlight - this.inFlight);
      if (!next) break;
      const { flow, payload } = next;
      const length = payload?.length ?? 0;
      this.#serialise(payload ? FRAME.DATA : FRAME.FIN, flow.id, payload);
      this.inFlight += length;
      room -= HEADER_SIZE + length;
      this.#wake(flow);
    }
    this.#seal();
    if (this.#chunks.length === 0) return;
    const chunks = this.#chunks;
    this.#chunks = [];
    // DATA left behind goes on when these bytes have left for the kernel.
    const more = !this.#data.empty && room <= 0 ? () => this.#roomMade() : undefined;
    if (more) this.#awaitingRoom = true;
    if (chunks.length === 1 && !this.#overLimit) socket.write(chunks[0], more);
    else {
      socket.cork();
      for (let i = 0; i < chunks.length - 1; i++) socket.write(chunks[i]);
      socket.write(chunks[chunks.length - 1], more);
      // Over the soft cap, the peer is not read until this is out: its callback says so even when no 'drain' comes.
      if (this.#overLimit)
        socket.write(EMPTY, () => {
          if (socket.writableLength === 0) this.#drained();
        });
      socket.uncork();
    }
    const buffered = socket.writableLength;
    if (buffered === 0) {
      // The kernel took every byte: the arena is free again (the socket keeps slices of it only while it waits).
      this.#start = this.#fill = 0;
      this.#drained();
    } else if (this.#limits && buffered > this.#limits.hardCap) this.#limits.onOverflow(buffered);
    // Otherwise the socket may hold slices of the arena: later frames go after them, never over them.
  }

  /** The session is gone: every waiting stream write goes on (its stream is destroyed). */
  release(): void {
    for (const done of this.#data.takeAllWaiters()) done();
  }

  /** Something was queued: flushed at the end of the turn, or now when a lot could go. */
  #queued(): void {
    if (this.#controlQueued >= FLUSH_AT || (!this.#awaitingRoom && this.#data.bytes >= FLUSH_AT)) this.flush();
    else this.#schedule();
  }

  #schedule(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.flush();
    });
  }

  /** The socket took the bytes DATA was waiting behind. */
  #roomMade(): void {
    this.#awaitingRoom = false;
    if (this.#socket.writableLength === 0) this.#drained();
    if (!this.#data.empty) this.#schedule();
  }

  /** Acknowledges the stream writes waiting on a flow whose queue is short again. */
  #wake(flow: Flow): void {
    if (flow.waiters.length === 0 || flow.bytes > STREAM_QUEUE_LOW) return;
    const waiters = flow.waiters;
    flow.waiters = [];
    for (const done of waiters) done();
  }

  #serialise(type: number, id: number, payload: Buffer | undefined): void {
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
    this.#controlBacklog = this.#controlQueued;
    if (!this.#overLimit) return;
    this.#overLimit = false;
    this.#limits?.onDrain();
  }
}
