import type { Kysely } from 'kysely';
import { MONITORING_CHANNEL } from '../../src/api/schemas/monitoring.ts';
import type { ChannelRelay, EventHub } from '../events/channel.ts';
import type { Logger } from '../logger.ts';
import {
  announceEvents, channelSeqs, EVENTS_CHANNEL, forgetSpilled, spilledEvents,
} from '../store/dialect/postgres-events.ts';
import type { PodNotifications } from '../store/opened-store.ts';
import type { Database } from '../store/schema.ts';
import { TOPOLOGY_CHANNEL } from '../tunnel-admin/topology-events.ts';

/** The channels every pod shares. Status-page channels are derived on each pod from these; route logs stay per pod. */
const CLUSTER_CHANNELS = new Set([MONITORING_CHANNEL, TOPOLOGY_CHANNEL]);
/** Bytes of events per notification; the rest of the 8,000-byte payload is the envelope. */
const CHUNK_BYTES = 7_000;
const SPILL_KEEP_MS = 10 * 60_000;

interface Envelope { c: string; s: number; o: string; e?: Array<[string, unknown]>; x?: number }

/**
 * Events of one pod reach the SSE subscribers of every pod (issue 18): a
 * publication on a cluster-wide channel is queued, numbered by the database
 * and announced by NOTIFY (postgres-events.ts), events of one tick together;
 * every pod, this one included, delivers what arrives in order, with the
 * same numbers, so Last-Event-ID resumes on any pod whose replay buffer
 * reaches back that far. An event too large for a notification is stored and
 * fetched. Payloads are handled one after another, so fetching keeps the order.
 */
export class EventRelay implements ChannelRelay {
  readonly #db: Kysely<Database>;
  readonly #hub: EventHub;
  readonly #instance: string;
  readonly #log: Logger;
  #seqs = new Map<string, number>();
  #queue = new Map<string, Array<[string, unknown]>>();
  #flushing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #arrivals: Promise<void> = Promise.resolve();
  #sweep: NodeJS.Timeout | undefined;

  private constructor(db: Kysely<Database>, hub: EventHub, instance: string, log: Logger) {
    this.#db = db;
    this.#hub = hub;
    this.#instance = instance;
    this.#log = log;
  }

  /** Reads every channel's last number, listens, and makes the hub's shared channels cluster-wide. */
  static async start(db: Kysely<Database>, notifications: PodNotifications, hub: EventHub, instance: string, log: Logger): Promise<EventRelay> {
    const relay = new EventRelay(db, hub, instance, log);
    relay.#seqs = await channelSeqs(db, CLUSTER_CHANNELS);
    notifications.listen(EVENTS_CHANNEL, (payload) => relay.#arrive(payload));
    notifications.onGap(() => void relay.#resync());
    hub.relay = relay;
    relay.#sweep = setInterval(() => void forgetSpilled(db, SPILL_KEEP_MS).catch(() => {}), SPILL_KEEP_MS);
    relay.#sweep.unref();
    return relay;
  }

  covers(name: string): boolean {
    return CLUSTER_CHANNELS.has(name);
  }

  seqOf(name: string): number {
    return this.#seqs.get(name) ?? 0;
  }

  publish(name: string, kind: string, data: unknown): void {
    let list = this.#queue.get(name);
    if (!list) this.#queue.set(name, (list = []));
    list.push([kind, data]);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const queue = this.#queue;
      this.#queue = new Map();
      this.#flushing = this.#flushing.then(() => this.#announce(queue));
    });
  }

  /** Waits for what was published so far to be announced (shutdown). */
  async drain(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await this.#flushing;
    clearInterval(this.#sweep);
  }

  async #announce(queue: Map<string, Array<[string, unknown]>>): Promise<void> {
    for (const [channel, events] of queue) {
      for (const chunk of chunks(events)) {
        try {
          await announceEvents(this.#db, channel, chunk.count, chunk.json, this.#instance, chunk.bytes > CHUNK_BYTES);
        } catch (err) {
          this.#log.warn({ err, channel, events: chunk.count }, 'events could not be announced to the pods');
        }
      }
    }
  }

  #arrive(payload: string): void {
    this.#arrivals = this.#arrivals.then(async () => {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(payload);
        if (envelope.x !== undefined) {
          const body = await spilledEvents(this.#db, envelope.x);
          if (body === undefined) throw new Error(`spilled events ${envelope.x} are gone`);
          envelope.e = JSON.parse(body);
        }
      } catch (err) {
        this.#log.warn({ err }, 'events from the pods could not be read');
        return;
      }
      const channel = this.#hub.channel(envelope.c);
      envelope.e!.forEach(([kind, data], i) => channel.deliver(envelope.s + i, kind, data, envelope.o === this.#instance));
      this.#seqs.set(envelope.c, envelope.s + envelope.e!.length - 1);
    });
  }

  /** After the listening connection was lost: channels that moved on meanwhile restart (their streams get a SNAPSHOT). */
  async #resync(): Promise<void> {
    try {
      const seqs = await channelSeqs(this.#db);
      for (const [name, seq] of seqs) {
        if (seq > (this.#seqs.get(name) ?? 0) && this.#hub.has(name)) this.#hub.channel(name).restart(seq);
        this.#seqs.set(name, Math.max(seq, this.#seqs.get(name) ?? 0));
      }
    } catch (err) {
      this.#log.warn({ err }, 'event numbers could not be read after reconnecting');
    }
  }
}

/** Runs of events whose JSON fits a notification; a single larger event is its own run (spilled). */
function chunks(events: Array<[string, unknown]>): Array<{ count: number; json: string; bytes: number }> {
  const out: Array<{ count: number; json: string; bytes: number }> = [];
  let parts: string[] = [];
  let bytes = 2;
  const flush = () => {
    if (parts.length === 0) return;
    const json = `[${parts.join(',')}]`;
    out.push({ count: parts.length, json, bytes: Buffer.byteLength(json) });
    parts = [];
    bytes = 2;
  };
  for (const event of events) {
    const part = JSON.stringify(event);
    const size = Buffer.byteLength(part) + 1;
    if (parts.length > 0 && bytes + size > CHUNK_BYTES) flush();
    parts.push(part);
    bytes += size;
  }
  flush();
  return out;
}
