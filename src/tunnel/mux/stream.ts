import { Duplex } from 'node:stream';
import { nowMs } from './windows.ts';

/** What a stream needs from its session (the session owns the socket and the windows). */
export interface StreamHost {
  /** Sends what the stream's pending write allows; the write callback runs once it is all sent. */
  pump(stream: MuxStream): void;
  fin(stream: MuxStream): void;
  /** The readable side was consumed: return receive credit to the peer. */
  consumed(stream: MuxStream): void;
  /** The stream is gone: forget it, and reset it at the peer when it did not end cleanly. */
  closed(stream: MuxStream, error: Error | null): void;
}

/** Error of a stream reset by the peer or cut with its session; `code` is machine-readable. */
export class StreamError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * One multiplexed stream: a Duplex with per-stream flow control. It also has
 * the slice of the net.Socket surface node:http needs, so an HTTP client can
 * run over it (a pooled "virtual connection" to a target behind the agent).
 */
export class MuxStream extends Duplex {
  readonly id: number;
  /** Bytes the peer lets us send (its receive window for this stream). */
  sendCredit: number;
  /** The write waiting for credit: chunk not yet sent, and the callback to run once it is. */
  pending: { chunk: Buffer; done: (err?: Error | null) => void } | undefined;
  /** Bytes received, and how many of them have been returned to the peer as credit. */
  received = 0;
  returned = 0;
  /** Our receive window: what the peer may send beyond `returned` (grows for a reader that keeps up). */
  recvWindow: number;
  /** Window growth epoch (windows.ts): bytes consumed when it began, and when (ms, 0: no byte yet). */
  epochConsumed = 0;
  epochAt = 0;
  finSent = false;
  finReceived = false;
  /** Set when the peer reset the stream: no RST is owed back. */
  resetByPeer = false;
  #idle: NodeJS.Timeout | undefined;
  readonly #host: StreamHost;

  constructor(host: StreamHost, id: number, sendCredit: number, recvWindow: number, allowHalfOpen: boolean) {
    super({ allowHalfOpen, readableHighWaterMark: 64 * 1024, writableHighWaterMark: 64 * 1024 });
    this.#host = host;
    this.id = id;
    this.sendCredit = sendCredit;
    this.recvWindow = recvWindow;
    // A session that dies destroys every stream with its reason; a pooled stream nobody is
    // using at that moment must not turn that into an uncaught 'error'. Users listen as usual.
    this.on('error', () => {});
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.#idle?.refresh();
    this.pending = { chunk, done };
    this.#host.pump(this);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: (err?: Error | null) => void): void {
    this._write(Buffer.concat(chunks.map((c) => c.chunk)), 'binary', done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.#host.fin(this);
    done();
  }

  override _read(): void {
    this.#host.consumed(this);
  }

  /**
   * Every read returns credit too, not only _read: Node calls _read once and no more until the next
   * push, and a _read that came while most of the window sat unread returned none. After a pause that
   * let the peer use up its window, no push could come, and the stream stalled for good.
   */
  override read(size?: number): any {
    const chunk = super.read(size);
    if (chunk !== null) this.#host.consumed(this);
    return chunk;
  }

  override _destroy(error: Error | null, done: (err: Error | null) => void): void {
    if (this.#idle) clearTimeout(this.#idle);
    const pending = this.pending;
    this.pending = undefined;
    this.#host.closed(this, error);
    pending?.done(); // the Writable is destroyed: it only needs its in-flight write settled
    done(error);
  }

  /** Called by the session for every DATA piece. */
  deliver(piece: Buffer): void {
    this.received += piece.length;
    if (this.epochAt === 0) this.epochAt = nowMs();
    this.#idle?.refresh();
    this.push(piece);
  }

  // The net.Socket surface node:http's Agent and ClientRequest use. Keepalive and Nagle belong
  // to the tunnel's real socket; the idle timeout is real, as http.Agent's free-socket timeout needs.
  setKeepAlive(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  /** As net.Socket: idle timeout re-armed by traffic; 0 disarms it and removes `onTimeout` (node:http relies on that). */
  setTimeout(ms: number, onTimeout?: () => void): this {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    if (ms > 0 && !this.destroyed) {
      if (onTimeout) this.once('timeout', onTimeout);
      this.#idle = setTimeout(() => this.emit('timeout'), ms);
      this.#idle.unref();
    } else if (onTimeout) {
      this.removeListener('timeout', onTimeout);
    }
    return this;
  }
}
