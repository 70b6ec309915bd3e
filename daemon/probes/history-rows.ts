import { type Kysely, sql, type Transaction } from 'kysely';
import { outcomeKey } from '../store/outcome-key.ts';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';

export const HOUR = 3_600_000;
/** Outcomes the writer remembers per database (an LRU): the usual few dozen, with room to spare. */
const MAX_OUTCOMES = 10_000;
/** Rows per statement: a few parameters a row stays under every dialect's bind-parameter limit. */
const MAX_ROWS = 256;

/** A check's outcome as history keeps it once (`check_outcomes`). */
export interface Outcome {
  status: string;
  errorCode: string | null;
  message: string | null;
}

/** One history row to write. */
export interface HistoryRow {
  resourceId: number;
  outcomeId: number;
  checkedAt: number;
  durationMs: number;
  changed: boolean;
  location: string | null;
  ping?: string | null;
  pingBody?: string | null;
}

const outcomeCaches = new WeakMap<Kysely<Database>, Map<string, number>>();
const hourCaches = new WeakMap<Kysely<Database>, Set<number>>();

function cacheOf<T>(caches: WeakMap<Kysely<Database>, T>, db: Kysely<Database>, make: () => T): T {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = make()));
  return cache;
}

/**
 * The ids of these outcomes, inserting the new ones. Runs on `db` itself, before the writer's
 * transaction: an outcome is committed once and for all (rows of a failed batch leave at most an
 * unused outcome), so the cache never holds an id that a rollback took back.
 */
export async function outcomeIds(db: Kysely<Database>, outcomes: Outcome[]): Promise<(o: Outcome) => number> {
  // Cached by the outcome's own text; the stored key (a hash) is computed only for outcomes not cached yet.
  const cache = cacheOf(outcomeCaches, db, () => new Map<string, number>());
  const textOf = (o: Outcome) => JSON.stringify([o.status, o.errorCode, o.message]);
  const missing = new Map<string, Outcome & { key: string }>();
  for (const o of outcomes) {
    const text = textOf(o);
    const id = cache.get(text);
    if (id === undefined) {
      if (!missing.has(text)) missing.set(text, { ...o, key: outcomeKey(o.status, o.errorCode, o.message) });
    } else {
      cache.delete(text);
      cache.set(text, id);
    }
  }
  if (missing.size > 0) {
    const texts = new Map([...missing].map(([text, o]) => [o.key, text]));
    const found = async () => {
      for (const part of shapedChunks([...texts.keys()], MAX_ROWS)) {
        for (const row of await db.selectFrom('check_outcomes').select(['id', 'key']).where('key', 'in', part).execute()) {
          const text = texts.get(row.key)!;
          cache.set(text, Number(row.id));
          missing.delete(text);
          texts.delete(row.key);
        }
      }
    };
    await found();
    if (missing.size > 0) {
      for (const part of shapedChunks([...missing.values()], MAX_ROWS))
        await db
          .insertInto('check_outcomes')
          .values(part.map((o) => ({ key: o.key, status: o.status, error_code: o.errorCode, message: o.message })))
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
      await found();
    }
    while (cache.size > MAX_OUTCOMES) cache.delete(cache.keys().next().value!);
  }
  return (o) => cache.get(textOf(o))!;
}

/**
 * Writes history rows inside the writer's transaction, and the first id of each hour they fall
 * in (`history_hours`, the lower one wins when pods race) unless this process already wrote it.
 * Returns the ids in input order and the hours written, which `hoursWritten` marks known once
 * the transaction committed.
 */
export async function insertHistory(
  trx: Transaction<Database>,
  db: Kysely<Database>,
  rows: HistoryRow[],
): Promise<{ ids: number[]; hours: number[] }> {
  const idsByResource = new Map<number, number[]>();
  for (const part of shapedChunks(rows, MAX_ROWS)) {
    const inserted = await trx
      .insertInto('check_history')
      .values(
        part.map((r) => ({
          resource_id: r.resourceId,
          outcome_id: r.outcomeId,
          checked_at: r.checkedAt,
          duration_ms: r.durationMs,
          changed: r.changed ? 1 : 0,
        })),
      )
      .returning(['id', 'resource_id'])
      .execute();
    for (const row of inserted) {
      const list = idsByResource.get(row.resource_id) ?? [];
      list.push(Number(row.id));
      idsByResource.set(row.resource_id, list);
    }
  }
  // Ids come back per resource in ascending order, which is insertion order.
  for (const list of idsByResource.values()) list.sort((a, b) => a - b);
  const ids = rows.map((r) => idsByResource.get(r.resourceId)!.shift()!);
  const details = rows.flatMap((r, i) =>
    r.location !== null || r.ping != null || r.pingBody != null
      ? [{ history_id: ids[i], location: r.location, ping: r.ping ?? null, ping_body: r.pingBody ?? null }]
      : [],
  );
  for (const part of shapedChunks(details, MAX_ROWS)) await trx.insertInto('check_details').values(part).execute();
  const known = cacheOf(hourCaches, db, () => new Set<number>());
  const firsts = new Map<number, number>();
  rows.forEach((r, i) => {
    const hour = r.checkedAt - (r.checkedAt % HOUR);
    if (!known.has(hour) && !(ids[i] >= (firsts.get(hour) ?? Number.POSITIVE_INFINITY))) firsts.set(hour, ids[i]);
  });
  if (firsts.size > 0)
    await trx
      .insertInto('history_hours')
      .values([...firsts].map(([hour_start, first_id]) => ({ hour_start, first_id })))
      .onConflict((oc) =>
        oc.column('hour_start').doUpdateSet({
          first_id: sql`CASE WHEN excluded.first_id < history_hours.first_id THEN excluded.first_id ELSE history_hours.first_id END`,
        }),
      )
      .execute();
  return { ids, hours: [...firsts.keys()] };
}

/** After the commit: these hours have their first id, later rows of theirs need not say so. */
export function hoursWritten(db: Kysely<Database>, hours: number[]): void {
  const known = cacheOf(hourCaches, db, () => new Set<number>());
  for (const hour of hours) known.add(hour);
  // Only recent hours are written to; forget the oldest beyond a few days' worth.
  while (known.size > 256) known.delete(known.values().next().value!);
}
