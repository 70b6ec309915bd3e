import type { Kysely } from 'kysely';
import type {} from '../context.ts';
import type { EventHub } from '../events/channel.ts';
import type { Logger } from '../logger.ts';
import { shapedChunks } from '../store/batches.ts';
import type { Database, RouteLogRow } from '../store/schema.ts';
import { isForeignKeyViolation } from '../store/storage-error.ts';
import { toLogEntry } from './mappers.ts';
import { ROUTE_LOG_COLUMNS, RouteLogSql } from './route-log-sql.ts';
import { routeLogChannel } from './topology-events.ts';

/** The newest entries kept per route (docs/API.md#access-log). */
export const ROUTE_LOG_RETENTION = 10_000;
const FLUSH_EVERY_MS = 100;
const FLUSH_AT = 500;
/** Beyond this many queued entries (database stalled), new ones are dropped rather than exhaust memory. */
const MAX_QUEUED = 50_000;

/**
 * One access-log entry as the data plane reports it. There are no header
 * fields at all, so credentials in headers can never be stored.
 */
export interface NewRouteLogEntry {
  routeId: number;
  /** Epoch ms; defaults to now. */
  at?: number;
  method: string | null;
  path: string | null;
  status: number | null;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  clientIp: string | null;
  agentId: number | null;
  podId: number | null;
  error: string | null;
}

declare module '../context.ts' {
  interface DaemonContext {
    /** Batches the tunnel's route log entries into the database (built by daemon/services.ts). */
    routeLog: RouteLogWriter;
  }
}

/** What the writer uses of the daemon. */
export interface RouteLogDeps {
  db: Kysely<Database>;
  log: Logger;
  events: EventHub;
}

const clip = (text: string | null, max: number) => (text === null ? null : text.slice(0, max));

/**
 * Queues entries and writes them in batches, one transaction each, every
 * 100 ms or at 500 queued; prunes each touched route to its newest 10,000;
 * after commit publishes `LOG` on `route-log:<id>` when that route is watched
 * (its rows are built from the values and the ids the insert returned).
 * One per daemon (`ctx.routeLog`), built by daemon/services.ts and closed
 * after the modules stop; the data plane appends to it for every finished
 * request or TCP connection, and `append` never throws.
 */
export class RouteLogWriter {
  readonly #ctx: RouteLogDeps;
  readonly #sql: RouteLogSql;
  #queue: NewRouteLogEntry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;
  dropped = 0;

  constructor(ctx: RouteLogDeps) {
    this.#ctx = ctx;
    this.#sql = new RouteLogSql(ctx.db, ROUTE_LOG_RETENTION);
  }

  append(entry: NewRouteLogEntry): void {
    if (this.#closed || this.#queue.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.#queue.push(entry);
    if (this.#queue.length >= FLUSH_AT) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
  }

  /** Writes what is queued; batches never overlap. Resolves when it is committed. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing
      .then(() => this.#writeQueued())
      .catch((err) => {
        this.#ctx.log.error({ err }, 'route log batch failed');
      });
    return this.#flushing;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  async #writeQueued(): Promise<void> {
    while (this.#queue.length) {
      const batch = this.#queue.splice(0, FLUSH_AT);
      let written: Array<[number, unknown[]]>;
      try {
        written = await this.#write(batch, false);
      } catch (err) {
        if (!isForeignKeyViolation(err)) throw err;
        // A route was deleted meanwhile: its entries are dropped (they would break the foreign key), the rest stay.
        written = await this.#write(batch, true);
      }
      const events = this.#ctx.events;
      for (const [id, values] of written) {
        const channel = routeLogChannel(values[0] as number);
        if (events.has(channel)) events.publishIfWatched(channel, 'LOG', toLogEntry(toRow(id, values)));
      }
    }
  }

  /**
   * One transaction: the batch's rows through statements compiled once (route-log-sql.ts), then
   * each touched route pruned to its newest ROUTE_LOG_RETENTION. The routes are not looked up
   * first (`checkRoutes` is the retry after a foreign-key failure). Answers each row's id and
   * values, in id order.
   */
  async #write(batch: NewRouteLogEntry[], checkRoutes: boolean): Promise<Array<[number, unknown[]]>> {
    return this.#ctx.db.transaction().execute(async (trx) => {
      let entries = batch;
      if (checkRoutes) {
        const routeIds = [...new Set(batch.map((e) => e.routeId))];
        const live = new Set((await trx.selectFrom('routes').select('id').where('id', 'in', routeIds).execute()).map((r) => Number(r.id)));
        entries = batch.filter((e) => live.has(e.routeId));
      }
      const written: Array<[number, unknown[]]> = [];
      // 12 values each: 64 rows stay far below every dialect's parameter limit.
      for (const part of shapedChunks(entries.map(toValues), 64)) {
        const { rows } = await trx.executeQuery(this.#sql.insert(part.length, part.flat()));
        // Row ids grow in the order of the VALUES rows (RETURNING itself promises no order).
        const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
        part.forEach((values, i) => written.push([ids[i], values]));
      }
      for (const routeId of new Set(entries.map((e) => e.routeId))) {
        const cutoff = (await trx.executeQuery(this.#sql.cutoff(routeId))).rows[0];
        if (cutoff) await trx.executeQuery(this.#sql.prune(routeId, Number(cutoff.id)));
      }
      return written;
    });
  }
}

/** An entry's column values, in ROUTE_LOG_COLUMNS order, clipped to the columns' sizes. */
function toValues(e: NewRouteLogEntry): unknown[] {
  return [
    e.routeId,
    e.at ?? Date.now(),
    clip(e.method, 16),
    clip(e.path, 4096),
    e.status,
    Math.max(0, Math.round(e.durationMs)),
    Math.max(0, Math.round(e.bytesIn)),
    Math.max(0, Math.round(e.bytesOut)),
    clip(e.clientIp, 64),
    e.agentId,
    e.podId,
    clip(e.error, 2000),
  ];
}

function toRow(id: number, v: unknown[]): RouteLogRow {
  const row: Record<string, unknown> = { id };
  ROUTE_LOG_COLUMNS.forEach((column, i) => {
    row[column] = v[i];
  });
  return row as unknown as RouteLogRow;
}
