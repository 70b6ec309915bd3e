import pg from 'pg';
import type { PodNotifications } from '../opened-store.ts';

/** NOTIFY refuses payloads of 8,000 bytes or more; a little room is left for the channel name. */
export const MAX_PAYLOAD_BYTES = 7_900;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * LISTEN on one dedicated connection (a pooled one would be handed to other
 * queries), reconnecting with backoff when it drops. NOTIFY goes through the
 * pool (`send`). Payloads arrive in commit order, on every listening pod alike.
 */
export class PostgresListener implements PodNotifications {
  readonly #config: pg.ClientConfig;
  readonly #send: (channel: string, payload: string) => Promise<void>;
  readonly #onError: (err: Error) => void;
  readonly #handlers = new Map<string, Set<(payload: string) => void>>();
  readonly #gapHandlers = new Set<() => void>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #retryMs = RETRY_MIN_MS;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #everConnected = false;
  /** LISTENs one after another: pg's client runs one query at a time. */
  #queries: Promise<void> = Promise.resolve();

  constructor(config: pg.ClientConfig, send: (channel: string, payload: string) => Promise<void>, onError: (err: Error) => void) {
    this.#config = config;
    this.#send = send;
    this.#onError = onError;
  }

  /** Connects the listening connection; resolves once it listens (or rejects on the first failure). */
  start(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  listen(channel: string, handler: (payload: string) => void): () => void {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      const client = this.#client;
      if (client)
        this.#queries = this.#queries
          .then(() => client.query(`LISTEN ${ident(channel)}`))
          .then(
            () => {},
            (err) => this.#onError(err),
          );
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  async notify(channel: string, payload: string): Promise<void> {
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES)
      throw new Error(`notification payload of ${Buffer.byteLength(payload)} bytes on ${channel} is too large`);
    await this.#send(channel, payload);
  }

  onGap(handler: () => void): () => void {
    this.#gapHandlers.add(handler);
    return () => this.#gapHandlers.delete(handler);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ ...this.#config, keepAlive: true });
    client.on('error', (err) => {
      this.#onError(err);
      this.#lost(client);
    });
    client.on('end', () => this.#lost(client));
    client.on('notification', (msg) => {
      const set = this.#handlers.get(msg.channel);
      if (!set || msg.payload === undefined) return;
      for (const handler of set) {
        try {
          handler(msg.payload);
        } catch (err) {
          this.#onError(err as Error);
        }
      }
    });
    await client.connect();
    if (this.#closed) {
      await client.end();
      return;
    }
    for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${ident(channel)}`);
    this.#client = client;
    this.#retryMs = RETRY_MIN_MS;
    if (this.#everConnected) for (const handler of this.#gapHandlers) handler();
    this.#everConnected = true;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#retry();
  }

  #retry(): void {
    if (this.#closed || this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.start().catch((err) => {
        this.#onError(err);
        this.#retry();
      });
    }, this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
  }
}

/** A channel name as an SQL identifier (ours are lower-case words; quoted anyway). */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
