import type { Kysely } from 'kysely';
import type { Logger } from '../logger.ts';
import { announceEvents, announceRestart } from '../store/dialect/postgres-events.ts';
import type { Database } from '../store/schema.ts';
import type { RelayLimits } from '../config/relay-limits.ts';
import type { CountLoss, LossReason } from './relay-metrics.ts';
import { yieldTurn } from '../util/yield-turn.ts';

/** Bytes of events per notification; the rest of the 8,000-byte payload is the envelope. */
const CHUNK_BYTES = 7_000;
/** After a failed announcement: the next try (the database is down or refusing; nothing is gained by hurrying). */
const RETRY_MS = 1_000;

interface Part {
  json: string;
  bytes: number;
}

/** One channel's events waiting to be announced, and where restart markers are owed. */
interface Outgoing {
  parts: Part[];
  /** Events ever queued / taken to be announced (announced or lost): positions in the channel's stream. */
  queued: number;
  taken: number;
  /** A restart marker is owed once `taken` reaches this; `markNext`: another one, for a loss after that. */
  markAt?: number;
  markNext?: number;
}

/**
 * The outgoing side of the event relay: the events this pod publishes on a
 * cluster-wide channel wait here to be numbered and announced (NOTIFY), in
 * order per channel, as many per notification as fit. What waits is bounded
 * (events and bytes); past it the newest publication is shed: what already
 * waits keeps its order, and the restart marker the loss calls for goes right
 * after it. Events lost, shed or in a failed announcement, are owed a marker,
 * announced once the database takes announcements again: every pod restarts
 * the channel, its streams end and their clients reconnect for a SNAPSHOT.
 */
export class EventAnnouncer {
  readonly #db: Kysely<Database>;
  readonly #instance: string;
  readonly #log: Logger;
  readonly #limits: RelayLimits;
  readonly #countLoss: CountLoss;
  readonly #channels = new Map<string, Outgoing>();
  #waiting = 0;
  #bytes = 0;
  /** Events lost since the last time every owed marker was announced (0: not shedding). */
  #lost = 0;
  #running: Promise<void> | undefined;
  #scheduled = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(db: Kysely<Database>, instance: string, log: Logger, limits: RelayLimits, countLoss: CountLoss) {
    this.#db = db;
    this.#instance = instance;
    this.#log = log;
    this.#limits = limits;
    this.#countLoss = countLoss;
  }

  /** Events queued or being announced. */
  get waiting(): number {
    return this.#waiting;
  }

  publish(name: string, kind: string, data: unknown): void {
    const out = this.#channel(name);
    const json = JSON.stringify([kind, data]);
    const bytes = Buffer.byteLength(json);
    // With nothing waiting, one event is always taken: an event larger than the byte bound is not lost for that alone.
    if (this.#waiting > 0 && (this.#waiting + 1 > this.#limits.maxEvents || this.#bytes + bytes > this.#limits.maxBytes)) {
      this.#owe(out, out.queued);
      this.#lose(name, 'full', 1);
    } else {
      out.parts.push({ json, bytes });
      out.queued++;
      this.#waiting++;
      this.#bytes += bytes;
    }
    this.#schedule();
  }

  /** Waits for the announcement under way (shutdown); what the database does not take now stays unsent. */
  async drain(): Promise<void> {
    await yieldTurn();
    await this.#running;
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  #channel(name: string): Outgoing {
    let out = this.#channels.get(name);
    if (!out) this.#channels.set(name, (out = { parts: [], queued: 0, taken: 0 }));
    return out;
  }

  /** Events of one tick go out together: the work starts on the next turn of the loop. */
  #schedule(): void {
    if (this.#scheduled || this.#running || this.#retry || this.#closed) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#work().finally(() => {
        this.#running = undefined;
        // Published after the last look, before this ran: the next turn takes it.
        if ([...this.#channels.values()].some((o) => o.parts.length > 0)) this.#schedule();
      });
    });
  }

  async #work(): Promise<void> {
    for (let busy = true; busy; ) {
      busy = false;
      for (const [name, out] of this.#channels) {
        if (out.parts.length > 0) {
          busy = true;
          if (!(await this.#announce(name, out))) return this.#later();
        }
        if (out.markAt !== undefined && out.taken >= out.markAt) {
          busy = true;
          if (!(await this.#restart(name, out))) return this.#later();
        }
      }
    }
    // Nothing waits and no marker is owed (a marker falls due as soon as its events are taken).
    if (this.#lost > 0) {
      this.#log.info(
        { events: this.#lost },
        'events are announced to the pods again; the channels that lost events restarted on every pod',
      );
      this.#lost = 0;
    }
  }

  /** The next run of events of the channel that fits a notification (a single larger event is spilled). */
  async #announce(name: string, out: Outgoing): Promise<boolean> {
    let count = 0;
    let bytes = 2;
    while (count < out.parts.length && (count === 0 || bytes + out.parts[count].bytes + 1 <= CHUNK_BYTES))
      bytes += out.parts[count++].bytes + 1;
    const run = out.parts.splice(0, count);
    out.taken += count;
    const held = run.reduce((n, p) => n + p.bytes, 0);
    try {
      await announceEvents(this.#db, name, count, `[${run.map((p) => p.json).join(',')}]`, this.#instance, bytes > CHUNK_BYTES);
      return true;
    } catch (err) {
      this.#owe(out, out.taken);
      this.#lose(name, 'failed', count, err);
      return false;
    } finally {
      this.#waiting -= count;
      this.#bytes -= held;
    }
  }

  async #restart(name: string, out: Outgoing): Promise<boolean> {
    try {
      await announceRestart(this.#db, name, this.#instance);
    } catch (err) {
      this.#log.debug({ err, channel: name }, 'the restart marker could not be announced yet');
      return false;
    }
    out.markAt = out.markNext;
    out.markNext = undefined;
    return true;
  }

  /** A marker is owed once the channel's events up to `position` are announced (every older event of the stream). */
  #owe(out: Outgoing, position: number): void {
    if (out.markAt === undefined) out.markAt = position;
    else if (position > out.markAt) out.markNext = Math.max(out.markNext ?? 0, position);
  }

  /** One warning per episode: from the first loss until every owed marker is announced. */
  #lose(channel: string, reason: LossReason, events: number, err?: unknown): void {
    this.#countLoss('out', reason, events);
    if (this.#lost === 0) {
      this.#log.warn(
        { err, channel, reason, waiting: this.#waiting, limits: this.#limits },
        'events for the pods are being lost (the database is slow or down); their channels restart on every pod once it takes announcements again',
      );
    }
    this.#lost += events;
  }

  /** The database did not take an announcement: what waits stays (bounded) and is tried again shortly. */
  #later(): void {
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#schedule();
    }, RETRY_MS);
    this.#retry.unref();
  }
}
