import type { Kysely, Selectable } from 'kysely';
import type { CheckRollupsTable, Database } from '../store/schema.ts';
import { endId, type HourIds, hourRange, loadHours } from './history-ranges.ts';
import { yieldTurn } from '../util/yield-turn.ts';
import { deleteBefore, type PauseObserver } from './history-prune.ts';
import { getSetting, setSetting } from './history-kept.ts';

export { HOUR } from './history-rows.ts';
import { HOUR } from './history-rows.ts';
export const DAY = 24 * HOUR;
/** The start of the first hour not rolled up yet (the status pages read raw checks from there). */
export const HOURLY_KEY = 'probes.rollup.hourly_until';
const DAILY_KEY = 'probes.rollup.daily_until';
const RESOURCE_CHUNK = 200;
/** History ids read per statement while rolling an hour up. */
const READ_CHUNK = 5_000;
/** Resource ids per read of a day's hourly rollups (24 rows each at most). */
const DAY_CHUNK = 1_000;
/** Hours rolled up per run at most, so that catching up after a long pause happens in steps. */
const MAX_HOURS_PER_RUN = 48;

interface Bucket {
  checks: number;
  available: number;
  sum: number;
  p95: number;
}

/** Where the hourly rollups end (0 before the first run): raw rows before it may be pruned. */
export async function rolledUpUntil(db: Kysely<Database>): Promise<number> {
  return (await getSetting(db, HOURLY_KEY)) ?? 0;
}

/** The p95 of a list (nearest rank), 0 when empty. Sorts in place. */
export function p95(values: number[]): number {
  if (values.length === 0) return 0;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.ceil(values.length * 0.95) - 1)];
}

async function writeBuckets(
  db: Kysely<Database>,
  table: 'check_rollups_hourly' | 'check_rollups_daily',
  start: number,
  buckets: Map<number, Bucket & { durations?: number[] }>,
) {
  // Small transactions (readers see a bucket only once HOURLY_KEY passes it, so a half-written one is never read).
  await db.deleteFrom(table).where('bucket_start', '=', start).execute();
  const entries = [...buckets.keys()];
  for (let i = 0; i < entries.length; i += RESOURCE_CHUNK) {
    // Each chunk's p95s here, not all at once: a million sorts would hold the event loop for seconds.
    const rows = entries.slice(i, i + RESOURCE_CHUNK).map((resource_id) => {
      const b = buckets.get(resource_id)!;
      return {
        resource_id,
        bucket_start: start,
        checks: b.checks,
        available: b.available,
        duration_sum_ms: Math.round(b.sum),
        duration_p95_ms: Math.round(b.durations ? p95(b.durations) : b.p95),
      };
    });
    await db.insertInto(table).values(rows).execute();
    await yieldTurn();
  }
}

/**
 * One hour from raw history: its id range (history_hours), read in bounded rowid-range chunks
 * with a turn of the event loop between them.
 */
async function rollupHour(db: Kysely<Database>, start: number, hours: HourIds[], end: number): Promise<void> {
  const buckets = new Map<number, Bucket & { durations: number[] }>();
  const range = hourRange(hours, start, end);
  for (let lo = range?.[0] ?? 0; range && lo < range[1]; lo += READ_CHUNK) {
    const rows = await db
      .selectFrom('check_history')
      .innerJoin('check_outcomes', 'check_outcomes.id', 'check_history.outcome_id')
      .select(['resource_id', 'status', 'duration_ms'])
      .where('check_history.id', '>=', lo)
      .where('check_history.id', '<', Math.min(lo + READ_CHUNK, range[1]))
      .where('checked_at', '>=', start)
      .where('checked_at', '<', start + HOUR)
      .execute();
    for (const row of rows) {
      let b = buckets.get(row.resource_id);
      if (!b) buckets.set(row.resource_id, (b = { checks: 0, available: 0, sum: 0, p95: 0, durations: [] }));
      b.checks++;
      if (row.status === 'AVAILABLE') b.available++;
      b.sum += Number(row.duration_ms);
      b.durations.push(Number(row.duration_ms));
    }
    await yieldTurn();
  }
  await writeBuckets(db, 'check_rollups_hourly', start, buckets);
}

/**
 * One UTC day from its hourly rollups: checks, uptime and mean are exact; the
 * p95 is the check-weighted 95th percentile of the hourly p95s (an upper-leaning
 * approximation that needs no raw rows).
 */
async function rollupDay(db: Kysely<Database>, start: number): Promise<void> {
  // By resource id ranges on the (resource_id, bucket_start) key: bounded reads, a turn between them.
  const last = await db
    .selectFrom('resources')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  const buckets = new Map<number, Bucket>();
  for (let from = 0; from <= Number(last?.id ?? 0); from += DAY_CHUNK) {
    const rows = await db
      .selectFrom('check_rollups_hourly')
      .selectAll()
      .where('resource_id', '>=', from)
      .where('resource_id', '<', from + DAY_CHUNK)
      .where('bucket_start', '>=', start)
      .where('bucket_start', '<', start + DAY)
      .execute();
    const byResource = new Map<number, Selectable<CheckRollupsTable>[]>();
    for (const row of rows) {
      const list = byResource.get(row.resource_id);
      if (list) list.push(row);
      else byResource.set(row.resource_id, [row]);
    }
    for (const [id, hours] of byResource) buckets.set(id, dayBucket(hours));
    await yieldTurn();
  }
  await writeBuckets(db, 'check_rollups_daily', start, buckets);
}

/** A day's bucket from its hourly ones (a resource's 24 at most). */
function dayBucket(hours: Selectable<CheckRollupsTable>[]): Bucket {
  const checks = hours.reduce((n, h) => n + Number(h.checks), 0);
  const sorted = [...hours].sort((a, b) => Number(a.duration_p95_ms) - Number(b.duration_p95_ms));
  let seen = 0;
  let value = 0;
  for (const h of sorted) {
    seen += Number(h.checks);
    value = Number(h.duration_p95_ms);
    if (seen >= checks * 0.95) break;
  }
  return {
    checks,
    available: hours.reduce((n, h) => n + Number(h.available), 0),
    sum: hours.reduce((n, h) => n + Number(h.duration_sum_ms), 0),
    p95: value,
  };
}

/**
 * Rolls up every complete hour and UTC day not yet rolled up (bounded per
 * run), then deletes raw history older than the retention. Idempotent: a
 * bucket is rewritten whole. Returns the hours and days written.
 */
export async function runRollups(
  db: Kysely<Database>,
  retentionDays: number,
  now = Date.now(),
  observe?: PauseObserver,
): Promise<{ hours: number; days: number; deleted: number }> {
  // An hour is rolled up a minute after it ends, so that its last results (batched) are written.
  const lastHour = Math.floor((now - 60_000) / HOUR) * HOUR;
  let hourly = await getSetting(db, HOURLY_KEY);
  const hoursWritten = await loadHours(db);
  const end = await endId(db);
  hourly ??= hoursWritten.length > 0 ? hoursWritten[0].hour : lastHour;
  let daily = (await getSetting(db, DAILY_KEY)) ?? Math.floor(hourly / DAY) * DAY;
  let hours = 0;
  while (hourly < lastHour && hours < MAX_HOURS_PER_RUN) {
    await rollupHour(db, hourly, hoursWritten, end);
    hourly += HOUR;
    hours++;
    await setSetting(db, HOURLY_KEY, hourly);
  }
  let days = 0;
  while (daily + DAY <= hourly) {
    await rollupDay(db, daily);
    daily += DAY;
    days++;
    await setSetting(db, DAILY_KEY, daily);
  }
  // Raw rows go only once their hour is rolled up.
  const cutoff = Math.min(now - retentionDays * DAY, hourly);
  const deleted = await deleteBefore(db, hoursWritten, cutoff - (cutoff % HOUR), end, observe);
  return { hours, days, deleted };
}
