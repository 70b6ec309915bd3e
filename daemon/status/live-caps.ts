import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { HttpError } from '../../src/errors.ts';
import { edgeClientIp } from '../http/client-ip.ts';
import { dialSource } from '../tunnel/dial-limiter.ts';
import type { StreamLimits } from '../config/values.ts';

export type ShedLimit = 'client' | 'connection';

/**
 * The client a stream counts against: its address as the edge sees it (behind
 * `--trusted-proxies`, the forwarded client), IPv4-mapped IPv6 as IPv4, and
 * IPv6 by its /64, since one host commonly holds a whole /64.
 */
export function streamClient(req: IncomingMessage): string {
  return dialSource(edgeClientIp(req) ?? undefined);
}

/** The connection a stream came on: the HTTP/2 session (which carries many streams), else the socket. */
function connectionOf(req: IncomingMessage): object {
  return (req as unknown as Http2ServerRequest).stream?.session ?? req.socket;
}

interface Held {
  res: ServerResponse;
  client: string;
  conn: object;
  released: boolean;
}

/**
 * Who holds the public live streams. Admitting a stream first ends the
 * oldest streams of its client and of its connection that are at their caps,
 * so that the new stream is served: a browser reconnecting is never locked
 * out by its own stale streams, and a client opening many streams only
 * replaces its own. Then the global bound: past it a new client gets 503,
 * and the streams of other clients are never touched.
 */
export class StreamCaps {
  readonly #limits: StreamLimits;
  readonly #onShed: (limit: ShedLimit) => void;
  readonly #byClient = new Map<string, Set<Held>>();
  readonly #byConnection = new Map<object, Set<Held>>();
  #open = 0;

  constructor(limits: StreamLimits, onShed: (limit: ShedLimit) => void) {
    this.#limits = limits;
    this.#onShed = onShed;
  }

  get open(): number {
    return this.#open;
  }

  /** Takes a place for the stream `res` answers, or throws 503; the returned function gives it back (once is enough, more are harmless). */
  admit(req: IncomingMessage, res: ServerResponse): () => void {
    const client = streamClient(req);
    const conn = connectionOf(req);
    this.#shedOldest(this.#byClient.get(client), this.#limits.perClient, 'client');
    this.#shedOldest(this.#byConnection.get(conn), this.#limits.perConnection, 'connection');
    if (this.#open >= this.#limits.max) {
      throw new HttpError(503, 'too-many-streams', 'Too many open status streams; retry later', { headers: { 'Retry-After': '30' } });
    }
    const held: Held = { res, client, conn, released: false };
    add(this.#byClient, client, held);
    add(this.#byConnection, conn, held);
    this.#open++;
    return () => this.#release(held);
  }

  /** Ends the oldest streams of `set` until one more fits under `cap` (a Set iterates in insertion order). */
  #shedOldest(set: Set<Held> | undefined, cap: number, limit: ShedLimit): void {
    while (set && set.size >= cap) {
      const oldest = set.values().next().value!;
      this.#release(oldest);
      this.#onShed(limit);
      // Destroyed, not ended: an end waits for a client that may not be reading; the place is free now either way.
      oldest.res.destroy();
    }
  }

  #release(held: Held): void {
    if (held.released) return;
    held.released = true;
    remove(this.#byClient, held.client, held);
    remove(this.#byConnection, held.conn, held);
    this.#open--;
  }
}

function add<K>(map: Map<K, Set<Held>>, key: K, held: Held): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(held);
}

function remove<K>(map: Map<K, Set<Held>>, key: K, held: Held): void {
  const set = map.get(key);
  if (!set?.delete(held) || set.size > 0) return;
  map.delete(key);
}
