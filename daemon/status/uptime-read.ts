import { type Kysely, sql } from 'kysely';
import { HOURLY_KEY } from '../probes/rollups.ts';
import { getSetting } from '../probes/history-kept.ts';
import type { Database } from '../store/schema.ts';
import { addBuckets, barStart, type BucketRow, DAY, since24h, type Tally } from './uptime.ts';

const HOUR = 3_600_000;
/**
 * Raw checks are read for at most this many hours before the current one: the
 * rollup job writes an hour a minute after it ends (every 5 minutes), so
 * normally only the current hour and, for a few minutes, the previous one are
 * not rolled up. A rollup job further behind makes the figures lag, as before.
 */
const RAW_HOURS_BEFORE = 2;

/** Whose checks: the resources of some groups (every grouped resource when empty), or one resource. */
export type Members = { groupIds: number[] } | { resourceId: number };

function filter(db: Kysely<Database>, members: Members) {
  if ('resourceId' in members) return [members.resourceId];
  return db
    .selectFrom('resource_groups')
    .select('resource_groups.resource_id')
    .$if(members.groupIds.length > 0, (q) => q.where('resource_groups.group_id', 'in', members.groupIds));
}

/**
 * Where the rollups end: the start of the first hour the rollup job has not
 * written. Before its first run (a new database), the current hour: there are
 * no rollups, and the raw checks of this hour are read.
 */
export async function rolledUntil(db: Kysely<Database>, now = Date.now()): Promise<number> {
  return (await getSetting(db, HOURLY_KEY)) ?? Math.floor(now / HOUR) * HOUR;
}

/**
 * The rollups before `until`, in ONE query over both tables: the daily
 * rollups of the bar's days (of days wholly before `until`), and the hourly
 * rollups from the start of yesterday (the last 24 hours, and the days whose
 * daily rollup is not written yet). Bounding both by `until` keeps them apart
 * from the raw checks read from `until` on, whatever the rollup job does
 * between the two reads.
 */
export function readRollups(db: Kysely<Database>, members: Members, until: number, now: number): Promise<BucketRow[]> {
  const ids = filter(db, members);
  const yesterday = Math.floor(now / DAY) * DAY - DAY;
  return db
    .selectFrom('check_rollups_daily')
    .select(['resource_id', 'bucket_start', 'checks', 'available', sql<number>`1`.as('daily')])
    .where('bucket_start', '>=', barStart(now))
    .where('bucket_start', '<=', until - DAY)
    .where('resource_id', 'in', ids)
    .unionAll(
      db
        .selectFrom('check_rollups_hourly')
        .select(['resource_id', 'bucket_start', 'checks', 'available', sql<number>`0`.as('daily')])
        .where('bucket_start', '>=', Math.min(yesterday, since24h(now)))
        .where('bucket_start', '<', until)
        .where('resource_id', 'in', ids),
    )
    .execute();
}

/**
 * The raw checks from `until` (not rolled up yet), per resource and hour: the
 * figures, the bar and the badges count a check from the moment it is
 * written, and an outage shows at once. Portable SQL (an integer remainder
 * and a CASE), on the (resource_id, id) index from the first id of the first
 * hour read (history_hours).
 */
export function readRecent(db: Kysely<Database>, members: Members, until: number, now: number): Promise<BucketRow[]> {
  const hour = sql<number>`checked_at - checked_at % ${sql.lit(HOUR)}`;
  const from = Math.max(until, Math.floor(now / HOUR) * HOUR - RAW_HOURS_BEFORE * HOUR);
  return db
    .selectFrom('check_history')
    .innerJoin('check_outcomes', 'check_outcomes.id', 'check_history.outcome_id')
    .select((eb) => [
      'resource_id',
      hour.as('bucket_start'),
      eb.fn.countAll<number>().as('checks'),
      sql<number>`sum(case when status = 'AVAILABLE' then 1 else 0 end)`.as('available'),
      sql<number>`0`.as('daily'),
    ])
    .where('resource_id', 'in', filter(db, members))
    .where('check_history.id', '>=', (eb) =>
      eb
        .selectFrom('history_hours')
        .select((h) => h.fn.min('first_id').as('first'))
        .where('hour_start', '>=', from - (from % HOUR)),
    )
    .where('checked_at', '>=', from)
    .groupBy(['resource_id', hour])
    .execute();
}

/** One resource's tally from its rollups and its raw checks (the badges: one resource, not cached). */
export async function readTally(db: Kysely<Database>, resourceId: number, now = Date.now()): Promise<Tally | undefined> {
  const until = await rolledUntil(db, now);
  const members = { resourceId };
  const [rolled, recent] = await Promise.all([readRollups(db, members, until, now), readRecent(db, members, until, now)]);
  return addBuckets(new Map(), [...rolled, ...recent], now).get(resourceId);
}
