import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { MONITORING_CHANNEL } from '../../src/api/schemas/monitoring.ts';
import type { ChannelRelay, EventHub } from '../events/channel.ts';
import type { Logger } from '../logger.ts';
import { channelSeqs, EVENTS_CHANNEL, forgetSpilled, spilledEvents } from '../store/dialect/postgres-events.ts';
import type { PodNotifications } from '../store/opened-store.ts';
import type { Database } from '../store/schema.ts';
import { TOPOLOGY_CHANNEL } from '../../src/api/schemas/tunnel.ts';
import { EventAnnouncer } from './event-announcer.ts';
import type { RelayLimits } from '../config/relay-limits.ts';
import { type CountLoss, registerRelayMetrics } from './relay-metrics.ts';

/** The channels every pod shares. Status-page channels are derived on each pod from these; route logs stay per pod. */
const CLUSTER_CHANNELS = new Set([MONITORING_CHANNEL, TOPOLOGY_CHANNEL]);
const SPILL_KEEP_MS = 10 * 60_000;
/** A resync that failed (the database is down) is tried again after this. */
const RESYNC_RETRY_MS = 1_000;

/** c: channel, s: first number, o: origin pod, e: events, x: spilled events' id, n: their count, r: restart marker. */
interface Envelope {
  c: string;
  s: number;
  o: string;
  e?: Array<[string, unknown]>;
  x?: number;
  n?: number;
  r?: boolean;
}
/** An arrival waiting to be delivered, or a resync of every channel. */
type Arrival = { envelope: Envelope; events: number; bytes: number } | 'resync';

/**
 * Events of one pod reach the SSE subscribers of every pod (docs/ARCHITECTURE.md#how-news-travels): a
 * publication on a cluster-wide channel is queued, numbered by the database
 * and announced by NOTIFY (event-announcer.ts, postgres-events.ts); every
 * pod, this one included, delivers what arrives in order, with the same
 * numbers, so Last-Event-ID resumes on any pod whose replay buffer reaches
 * back that far. An event too large for a notification is stored and
 * fetched. Arrivals are handled one after another, so fetching keeps the
 * order; what waits is bounded: past it, the waiting arrivals are dropped and
 * every channel that moved on restarts (as after a lost LISTEN connection).
 */
export class EventRelay implements ChannelRelay {
  readonly #db: Kysely<Database>;
  readonly #hub: EventHub;
  readonly #instance: string;
  readonly #log: Logger;
  readonly #limits: RelayLimits;
  readonly #countLoss: CountLoss;
  readonly #out: EventAnnouncer;
  #seqs = new Map<string, number>();
  readonly #arrivals: Arrival[] = [];
  #inWaiting = 0;
  #inBytes = 0;
  /** Arrivals dropped since the last completed resync (0: not shedding). */
  #inLost = 0;
  #delivering = false;
  #sweep: NodeJS.Timeout | undefined;
  #resyncRetry: NodeJS.Timeout | undefined;

  private constructor(db: Kysely<Database>, hub: EventHub, instance: string, log: Logger, limits: RelayLimits, registry: Registry) {
    this.#db = db;
    this.#hub = hub;
    this.#instance = instance;
    this.#log = log;
    this.#limits = limits;
    this.#countLoss = registerRelayMetrics(registry, (direction) => (direction === 'out' ? this.#out.waiting : this.#inWaiting));
    this.#out = new EventAnnouncer(db, instance, log, limits, this.#countLoss);
  }

  /** Reads every channel's last number, listens, and makes the hub's shared channels cluster-wide. */
  static async start(
    db: Kysely<Database>,
    notifications: PodNotifications,
    hub: EventHub,
    instance: string,
    log: Logger,
    limits: RelayLimits,
    registry: Registry,
  ): Promise<EventRelay> {
    const relay = new EventRelay(db, hub, instance, log, limits, registry);
    relay.#seqs = await channelSeqs(db, CLUSTER_CHANNELS);
    notifications.listen(EVENTS_CHANNEL, (payload) => relay.#arrive(payload));
    notifications.onGap(() => relay.#queue('resync'));
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
    this.#out.publish(name, kind, data);
  }

  /** Waits for what was published so far to be announced (shutdown). */
  async drain(): Promise<void> {
    await this.#out.drain();
    clearInterval(this.#sweep);
    clearTimeout(this.#resyncRetry);
  }

  #arrive(payload: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload);
    } catch (err) {
      this.#log.warn({ err }, 'events from the pods could not be read');
      return;
    }
    const events = envelope.e?.length ?? envelope.n ?? 1;
    const bytes = payload.length;
    // One arrival is always taken, whatever its size: the bound is on what piles up behind a slow one.
    if (this.#arrivals.length > 0 && (this.#inWaiting + events > this.#limits.maxEvents || this.#inBytes + bytes > this.#limits.maxBytes)) {
      this.#shedArrivals(events);
      return;
    }
    this.#queue({ envelope, events, bytes });
  }

  #queue(arrival: Arrival): void {
    this.#arrivals.push(arrival);
    if (arrival !== 'resync') {
      this.#inWaiting += arrival.events;
      this.#inBytes += arrival.bytes;
    }
    void this.#deliverAll();
  }

  /** Drops every waiting arrival and the one that did not fit; a resync then restarts the channels that moved on. */
  #shedArrivals(events: number): void {
    let dropped = events;
    for (const arrival of this.#arrivals.splice(0)) {
      if (arrival === 'resync') continue;
      dropped += arrival.events;
      this.#inWaiting -= arrival.events;
      this.#inBytes -= arrival.bytes;
    }
    this.#countLoss('in', 'full', dropped);
    if (this.#inLost === 0) {
      this.#log.warn(
        { waiting: this.#inWaiting + dropped, limits: this.#limits },
        'events from the pods arrive faster than they can be delivered (spilled events are slow to read): the waiting ones are dropped and the channels restart',
      );
    }
    this.#inLost += dropped;
    this.#queue('resync');
  }

  /** One arrival after another (a spilled one waits for its read), in the order they came. */
  async #deliverAll(): Promise<void> {
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let arrival = this.#arrivals.shift(); arrival; arrival = this.#arrivals.shift()) {
        if (arrival === 'resync') {
          await this.#resync();
          continue;
        }
        try {
          await this.#deliver(arrival.envelope);
        } catch (err) {
          this.#log.warn({ err, channel: arrival.envelope.c }, 'events from the pods could not be delivered');
        } finally {
          this.#inWaiting -= arrival.events;
          this.#inBytes -= arrival.bytes;
        }
      }
    } finally {
      this.#delivering = false;
    }
  }

  async #deliver(envelope: Envelope): Promise<void> {
    const channel = this.#hub.channel(envelope.c);
    let events = envelope.e ?? [];
    if (envelope.r) {
      // Events were lost before this number (shed, or not announced): every pod's streams start again.
      if (envelope.s > channel.seq) channel.restart(envelope.s);
      this.#seqs.set(envelope.c, Math.max(envelope.s, this.#seqs.get(envelope.c) ?? 0));
      return;
    }
    if (envelope.x !== undefined) {
      try {
        const body = await spilledEvents(this.#db, envelope.x);
        if (body === undefined) throw new Error(`spilled events ${envelope.x} are gone`);
        events = JSON.parse(body);
      } catch (err) {
        // Lost here: the channel restarts after the numbers they had.
        const last = envelope.s + (envelope.n ?? 1) - 1;
        this.#countLoss('in', 'failed', envelope.n ?? 1);
        this.#log.warn({ err, channel: envelope.c }, 'events from the pods could not be read; the channel restarts');
        if (last > channel.seq) channel.restart(last);
        this.#seqs.set(envelope.c, Math.max(last, this.#seqs.get(envelope.c) ?? 0));
        return;
      }
    }
    events.forEach(([kind, data], i) => channel.deliver(envelope.s + i, kind, data, envelope.o === this.#instance));
    this.#seqs.set(envelope.c, envelope.s + events.length - 1);
  }

  /** After the listening connection was lost, or arrivals were dropped: channels that moved on meanwhile restart (their streams get a SNAPSHOT). */
  async #resync(): Promise<void> {
    try {
      const seqs = await channelSeqs(this.#db);
      for (const [name, seq] of seqs) {
        if (seq > (this.#seqs.get(name) ?? 0) && this.#hub.has(name)) this.#hub.channel(name).restart(seq);
        this.#seqs.set(name, Math.max(seq, this.#seqs.get(name) ?? 0));
      }
      if (this.#inLost > 0)
        this.#log.info({ events: this.#inLost }, 'events from the pods are delivered again; the channels that lost events restarted');
      this.#inLost = 0;
    } catch (err) {
      this.#log.warn({ err }, 'event numbers could not be read to resynchronise; trying again');
      clearTimeout(this.#resyncRetry);
      this.#resyncRetry = setTimeout(() => this.#queue('resync'), RESYNC_RETRY_MS);
      this.#resyncRetry.unref();
    }
  }
}
