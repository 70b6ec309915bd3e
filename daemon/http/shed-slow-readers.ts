import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

export interface SlowReaderLimits {
  /** Bytes per second a client must take while a response waits on it. */
  floorBytesPerSec: number;
  /** Over how long the rate is measured (and so the least time a slow client is kept). */
  windowMs: number;
}

/** What is tracked of a reader with unsent response bytes: since when, and how much it had taken then. */
interface Watch {
  since: number;
  taken: number;
}

/**
 * The rule both shedders apply (here and shed-slow-h2-streams.ts), per reader:
 * while response bytes wait on it, it must have taken `floor × window` bytes
 * over each window. A reader with nothing waiting starts again from zero.
 */
export class ReadRate<K> {
  readonly #watches = new Map<K, Watch | undefined>();
  readonly #limits: SlowReaderLimits;

  constructor(limits: SlowReaderLimits) {
    this.#limits = limits;
  }

  /** How often to check: often enough that nobody is kept much past the window. */
  get periodMs(): number {
    return Math.min(1_000, this.#limits.windowMs / 4);
  }

  add(key: K): void {
    this.#watches.set(key, undefined);
  }
  delete(key: K): void {
    this.#watches.delete(key);
  }
  keys(): IterableIterator<K> {
    return this.#watches.keys();
  }

  /**
   * True when `key`, with `waiting` bytes waiting and `taken` bytes taken so
   * far (a running total), read too slowly over its last window; it is then
   * forgotten.
   */
  tooSlow(key: K, waiting: number, taken: number, now: number): boolean {
    const watch = this.#watches.get(key);
    if (waiting === 0) {
      if (watch) this.#watches.set(key, undefined);
      return false;
    }
    if (!watch) {
      this.#watches.set(key, { since: now, taken });
      return false;
    }
    const elapsed = now - watch.since;
    if (elapsed < this.#limits.windowMs) return false;
    if ((taken - watch.taken) * 1000 < this.#limits.floorBytesPerSec * elapsed) {
      this.#watches.delete(key);
      return true;
    }
    this.#watches.set(key, { since: now, taken });
    return false;
  }
}

/**
 * Sheds clients that read their responses slower than a floor (without it, a
 * client taking 64 B every 2 s stayed connected for 120 s; 1,000 of them held
 * 350 MB). Once a second, each connection with response bytes waiting in its
 * socket is checked (`ReadRate`), and destroyed when too slow (a proxied
 * response's tunnel stream is reset in turn). Upgraded connections (the agent
 * tunnel, WebSockets) are left alone: the tunnel has its own limits, a
 * WebSocket may be idle for long. HTTP/2 streams share their socket: they are
 * watched one by one (shed-slow-h2-streams.ts).
 */
export function shedSlowReaders(server: Server, limits: SlowReaderLimits, onShed: () => void = () => {}): () => void {
  const rate = new ReadRate<Socket>(limits);
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    rate.add(socket);
    socket.once('close', () => rate.delete(socket));
  });
  server.on('upgrade', (req) => rate.delete(req.socket as Socket));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const socket of rate.keys()) {
      if (socket.destroyed) {
        rate.delete(socket);
        continue;
      }
      // Taken by the client's kernel: everything handed to the socket minus what still waits in it.
      if (rate.tooSlow(socket, socket.writableLength, socket.bytesWritten - socket.writableLength, now)) {
        onShed();
        socket.destroy();
      }
    }
  }, rate.periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
