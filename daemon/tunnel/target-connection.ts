import { maxHeaderSize } from 'node:http';
import type { MuxSession } from '../../src/tunnel/mux/session.ts';
import type { Duplex } from 'node:stream';
import type { StreamTarget } from '../../src/tunnel/protocol.ts';
import { ResponseParser, type ResponseSink } from './response-parser.ts';

/** How long a kept-alive connection may stay idle (a target's shorter Keep-Alive timeout wins). */
const IDLE_MS = 30_000;
/** Idle connections kept per target, as http.Agent's maxFreeSockets was. */
const MAX_FREE = 256;

/** One exchange on a target connection, as the edge handles it. */
export interface ExchangeHandler {
  /** The response head, headers as a flat list (name, value, …). */
  head(status: number, headers: string[]): void;
  body(piece: Buffer): void;
  /** Every body piece of one received chunk has been passed on (a place to write what was held). */
  flush(): void;
  end(): void;
  /** The exchange failed; `code` says why (the agent's reset code, ECONNRESET, HPE_INVALID). */
  error(err: NodeJS.ErrnoException): void;
  /** The stream can take more of the request body. */
  drain(): void;
}

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

/** Where a connection goes back when idle: a session's pool, or a pool of relays through another pod (tunnel/tunnel-relay.ts). */
export interface ConnectionPool {
  release(conn: TargetConnection): boolean;
  forget(conn: TargetConnection): void;
}

/**
 * A kept-alive HTTP/1.1 connection to a target: one tunnel stream that the
 * agent pipes to its own TCP (or TLS) connection. The daemon writes request
 * heads itself and parses the answers (response-parser.ts); one exchange at a
 * time, reused once both its request and its response are complete.
 */
export class TargetConnection implements ResponseSink {
  /** A tunnel stream, or a relay socket to the pod that holds the agent's session. */
  readonly stream: Duplex;
  readonly #pool: ConnectionPool;
  readonly #parser: ResponseParser;
  #handler: ExchangeHandler | undefined;
  #requestDone = true;
  #responseDone = true;
  #keepAlive = false;
  #idleMs = IDLE_MS;
  #idleSince = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #error: NodeJS.ErrnoException | undefined;

  constructor(pool: ConnectionPool, stream: Duplex) {
    this.#pool = pool;
    this.stream = stream;
    this.#parser = new ResponseParser(this, maxHeaderSize);
    stream.on('data', (chunk: Buffer) => {
      this.#parser.push(chunk);
      this.#handler?.flush();
    });
    stream.on('end', () => this.#parser.eof());
    stream.on('drain', () => this.#handler?.drain());
    stream.on('error', (err: NodeJS.ErrnoException) => {
      this.#error ??= err;
    });
    stream.on('close', () => {
      this.#pool.forget(this);
      const handler = this.#handler;
      this.#handler = undefined;
      handler?.error(this.#error ?? failure('ECONNRESET', 'socket hang up'));
    });
  }

  /** Sends a request head (and with it what body it has); `requestDone`: nothing more follows. */
  send(method: string, head: string, handler: ExchangeHandler, requestDone: boolean): void {
    this.#handler = handler;
    this.#requestDone = requestDone;
    this.#responseDone = false;
    this.#keepAlive = false;
    this.#parser.expect(method);
    // Header values are Latin-1 strings (as node:http decoded them): written back as the same bytes.
    this.stream.write(head, 'latin1');
  }

  /** Writes request body bytes; false when the stream's buffer is full (wait for `drain`). */
  write(data: Buffer | string): boolean {
    return this.stream.write(data, 'latin1');
  }

  /** The request is complete. */
  endRequest(): void {
    this.#requestDone = true;
    this.#settle();
  }

  /** Stops or resumes reading the response (the client's socket is full / drained). */
  pause(): void {
    this.stream.pause();
  }
  resume(): void {
    this.stream.resume();
  }

  /** Abandons the exchange (client gone, timeout): the stream is reset, the agent closes its connection. */
  destroy(err?: Error): void {
    if (!err) this.#handler = undefined;
    this.stream.destroy(err);
  }

  // ResponseSink: called by the parser.

  head(status: number, headers: string[], keepAlive: boolean): void {
    this.#keepAlive = keepAlive;
    this.#idleMs = IDLE_MS;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i].length !== 10 || headers[i].toLowerCase() !== 'keep-alive') continue;
      // As http.Agent: a second under the target's own idle timeout, so we never send into its close.
      const timeout = /timeout=(\d+)/i.exec(headers[i + 1]);
      if (timeout) this.#idleMs = Math.min(IDLE_MS, Number(timeout[1]) * 1000 - 1000);
    }
    this.#handler?.head(status, headers);
  }

  body(piece: Buffer): void {
    this.#handler?.body(piece);
  }

  end(): void {
    this.#responseDone = true;
    const handler = this.#handler;
    this.#handler = undefined;
    handler?.end();
    this.#settle();
  }

  error(message: string): void {
    const eof = message.startsWith('the connection closed');
    this.stream.destroy(eof ? failure('ECONNRESET', 'socket hang up') : failure('HPE_INVALID', `Parse Error: ${message}`));
  }

  /** Back to the pool once request and response are both complete, if the target keeps it alive. */
  #settle(): void {
    if (!this.#requestDone || !this.#responseDone || this.stream.destroyed) return;
    if (!this.#keepAlive || this.#idleMs <= 0 || this.stream.readableEnded || !this.#pool.release(this)) return void this.stream.destroy();
    this.#idleSince = Date.now();
    // One timer per idle period at most, re-armed lazily, instead of one per request.
    this.#idleTimer ??= setTimeout(() => this.#checkIdle(), this.#idleMs).unref();
  }

  #checkIdle(): void {
    this.#idleTimer = undefined;
    if (this.#handler || this.stream.destroyed) return;
    const left = this.#idleSince + this.#idleMs - Date.now();
    if (left <= 0) return void this.stream.destroy();
    this.#idleTimer = setTimeout(() => this.#checkIdle(), left).unref();
  }
}

/**
 * Idle kept-alive connections to one target, reused last-in first-out (as
 * http.Agent schedules), at most `max`; what opens a new one is the subclass's.
 */
export abstract class KeptAlivePool implements ConnectionPool {
  readonly #free: TargetConnection[] = [];
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The most recently released idle connection, if any. */
  protected idle(): TargetConnection | undefined {
    return this.#free.pop();
  }

  /** False when the pool is full (the connection is then closed). */
  release(conn: TargetConnection): boolean {
    if (this.#free.length >= this.#max) return false;
    this.#free.push(conn);
    return true;
  }

  forget(conn: TargetConnection): void {
    const at = this.#free.indexOf(conn);
    if (at >= 0) this.#free.splice(at, 1);
  }

  /** Closes the idle connections (busy ones finish first). */
  dropIdle(): void {
    for (const conn of this.#free.splice(0)) conn.stream.destroy();
  }

  destroy(): void {
    this.dropIdle();
  }
}

/** Kept-alive connections to one target through one agent session. Dies with the session. */
export class TargetPool extends KeptAlivePool {
  readonly #mux: MuxSession;
  readonly #target: StreamTarget;

  constructor(mux: MuxSession, target: StreamTarget) {
    super(MAX_FREE);
    this.#mux = mux;
    this.#target = target;
  }

  /** An idle connection, or a new stream; throws when the session is closing or gone. */
  acquire(): TargetConnection {
    return this.idle() ?? new TargetConnection(this, this.#mux.open(this.#target, { allowHalfOpen: false }));
  }
}
