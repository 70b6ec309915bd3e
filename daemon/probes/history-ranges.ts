import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { HOUR } from './history-rows.ts';

/** The first id of each hour written, oldest hour first (a row per hour: a month is 720 rows). */
export interface HourIds {
  hour: number;
  first: number;
}

export async function loadHours(db: Kysely<Database>): Promise<HourIds[]> {
  const rows = await db.selectFrom('history_hours').select(['hour_start', 'first_id']).orderBy('hour_start').execute();
  return rows.map((r) => ({ hour: Number(r.hour_start), first: Number(r.first_id) }));
}

/** One past the newest id (0 when history is empty): a rowid lookup. */
export async function endId(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('check_history')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return row?.id == null ? 0 : Number(row.id) + 1;
}

/**
 * The ids that hold hour `start`'s checks: from its first id to the first id of the first hour
 * at least two hours later that starts above it (a check written more than an hour late, which
 * the rollup a minute after its hour missed anyway, is left out), else to `end`.
 * Undefined when no check of that hour was written.
 */
export function hourRange(hours: HourIds[], start: number, end: number): [number, number] | undefined {
  const at = hours.find((h) => h.hour === start);
  if (!at) return undefined;
  const next = hours.find((h) => h.hour >= start + 2 * HOUR && h.first > at.first);
  return [at.first, next ? next.first : end];
}

/** The first id of the first hour written at or after `start`, else `end`: every id below it is older. */
export function idFrom(hours: HourIds[], start: number, end: number): number {
  return hours.find((h) => h.hour >= start)?.first ?? end;
}
