import type { DaemonContext } from '../context.ts';
import { shapedChunks } from '../store/batches.ts';
import type { RouteLogRow } from '../store/schema.ts';
import { toLogEntry } from './mappers.ts';
import { routeLogChannel } from './topology-events.ts';

/** The newest entries kept per route (CONTRACT section 5). */
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

const clip = (text: string | null, max: number) => (text === null ? null : text.slice(0, max));

/**
 * Queues entries and writes them in batches, one transaction each, every
 * 100 ms or at 500 queued; prunes each touched route to its newest 10,000;
 * after commit publishes `LOG` on `route-log:<id>` when that route is watched.
 */
export class RouteLogWriter {
  readonly #ctx: DaemonContext;
  #queue: NewRouteLogEntry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;
  dropped = 0;

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
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
    this.#flushing = this.#flushing.then(() => this.#writeQueued()).catch((err) => {
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
      const rows = await this.#write(batch);
      for (const row of rows) this.#ctx.events.publishIfWatched(routeLogChannel(Number(row.route_id)), 'LOG', toLogEntry(row));
    }
  }

  async #write(batch: NewRouteLogEntry[]): Promise<RouteLogRow[]> {
    const routeIds = [...new Set(batch.map((e) => e.routeId))];
    return this.#ctx.db.transaction().execute(async (trx) => {
      // Entries of a route deleted meanwhile are dropped (they would break the foreign key).
      const live = new Set((await trx.selectFrom('routes').select('id').where('id', 'in', routeIds).execute()).map((r) => Number(r.id)));
      const values = batch.filter((e) => live.has(e.routeId)).map((e) => ({
        route_id: e.routeId, at: e.at ?? Date.now(), method: clip(e.method, 16), path: clip(e.path, 4096),
        status: e.status, duration_ms: Math.max(0, Math.round(e.durationMs)), bytes_in: Math.max(0, Math.round(e.bytesIn)),
        bytes_out: Math.max(0, Math.round(e.bytesOut)), client_ip: clip(e.clientIp, 64), agent_id: e.agentId,
        pod_id: e.podId, error: clip(e.error, 2000),
      }));
      if (values.length === 0) return [];
      const rows: RouteLogRow[] = [];
      // 13 columns each: 64 rows stay far below every dialect's parameter limit.
      for (const part of shapedChunks(values, 64)) {
        rows.push(...await trx.insertInto('route_log').values(part).returningAll().execute());
      }
      for (const routeId of live) {
        const cutoff = await trx.selectFrom('route_log').select('id').where('route_id', '=', routeId)
          .orderBy('id', 'desc').limit(1).offset(ROUTE_LOG_RETENTION).executeTakeFirst();
        if (cutoff) await trx.deleteFrom('route_log').where('route_id', '=', routeId).where('id', '<=', cutoff.id).execute();
      }
      return rows.sort((a, b) => Number(a.id) - Number(b.id));
    });
  }
}

const writers = new WeakMap<DaemonContext, RouteLogWriter>();

export function routeLogWriter(ctx: DaemonContext): RouteLogWriter {
  let writer = writers.get(ctx);
  if (!writer) {
    writer = new RouteLogWriter(ctx);
    writers.set(ctx, writer);
  }
  return writer;
}

/** What the data plane calls for every finished request or TCP connection. Never throws. */
export function appendRouteLog(ctx: DaemonContext, entry: NewRouteLogEntry): void {
  routeLogWriter(ctx).append(entry);
}
