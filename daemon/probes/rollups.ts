import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** The start of the first hour not rolled up yet (the status pages read raw checks from there). */
export const HOURLY_KEY = 'probes.rollup.hourly_until';
const DAILY_KEY = 'probes.rollup.daily_until';
const RESOURCE_CHUNK = 200;
/** Hours rolled up per run at most, so that catching up after a long pause happens in steps. */
const MAX_HOURS_PER_RUN = 48;

interface Bucket {
  checks: number;
  available: number;
  sum: number;
  p95: number;
}

async function getSetting(db: Kysely<Database>, key: string): Promise<number | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? Number(row.value) : undefined;
}

async function setSetting(db: Kysely<Database>, key: string, value: number): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value: String(value) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(value) }))
    .execute();
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
  buckets: Map<number, Bucket>,
) {
  const rows = [...buckets].map(([resource_id, b]) => ({
    resource_id,
    bucket_start: start,
    checks: b.checks,
    available: b.available,
    duration_sum_ms: Math.round(b.sum),
    duration_p95_ms: Math.round(b.p95),
  }));
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom(table).where('bucket_start', '=', start).execute();
    for (let i = 0; i < rows.length; i += RESOURCE_CHUNK)
      await trx
        .insertInto(table)
        .values(rows.slice(i, i + RESOURCE_CHUNK))
        .execute();
  });
}

/** One hour from raw history, resource by resource chunk (no long-held reads). */
async function rollupHour(db: Kysely<Database>, start: number): Promise<void> {
  const ids = (await db.selectFrom('resources').select('id').execute()).map((r) => r.id);
  const buckets = new Map<number, Bucket>();
  for (let i = 0; i < ids.length; i += RESOURCE_CHUNK) {
    const rows = await db
      .selectFrom('check_history')
      .select(['resource_id', 'status', 'duration_ms'])
      .where('resource_id', 'in', ids.slice(i, i + RESOURCE_CHUNK))
      .where('checked_at', '>=', start)
      .where('checked_at', '<', start + HOUR)
      .execute();
    const durations = new Map<number, number[]>();
    for (const row of rows) {
      const list = durations.get(row.resource_id) ?? [];
      list.push(Number(row.duration_ms));
      durations.set(row.resource_id, list);
      const b = buckets.get(row.resource_id) ?? { checks: 0, available: 0, sum: 0, p95: 0 };
      b.checks++;
      if (row.status === 'AVAILABLE') b.available++;
      b.sum += Number(row.duration_ms);
      buckets.set(row.resource_id, b);
    }
    for (const [id, list] of durations) buckets.get(id)!.p95 = p95(list);
  }
  await writeBuckets(db, 'check_rollups_hourly', start, buckets);
}

/**
 * One UTC day from its hourly rollups: checks, uptime and mean are exact; the
 * p95 is the check-weighted 95th percentile of the hourly p95s (an upper-leaning
 * approximation that needs no raw rows).
 */
async function rollupDay(db: Kysely<Database>, start: number): Promise<void> {
  const rows = await db
    .selectFrom('check_rollups_hourly')
    .selectAll()
    .where('bucket_start', '>=', start)
    .where('bucket_start', '<', start + DAY)
    .execute();
  const byResource = new Map<number, typeof rows>();
  for (const row of rows) byResource.set(row.resource_id, [...(byResource.get(row.resource_id) ?? []), row]);
  const buckets = new Map<number, Bucket>();
  for (const [id, hours] of byResource) {
    const checks = hours.reduce((n, h) => n + Number(h.checks), 0);
    const sorted = [...hours].sort((a, b) => Number(a.duration_p95_ms) - Number(b.duration_p95_ms));
    let seen = 0;
    let value = 0;
    for (const h of sorted) {
      seen += Number(h.checks);
      value = Number(h.duration_p95_ms);
      if (seen >= checks * 0.95) break;
    }
    buckets.set(id, {
      checks,
      available: hours.reduce((n, h) => n + Number(h.available), 0),
      sum: hours.reduce((n, h) => n + Number(h.duration_sum_ms), 0),
      p95: value,
    });
  }
  await writeBuckets(db, 'check_rollups_daily', start, buckets);
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
): Promise<{ hours: number; days: number; deleted: number }> {
  // An hour is rolled up a minute after it ends, so that its last results (batched) are written.
  const lastHour = Math.floor((now - 60_000) / HOUR) * HOUR;
  let hourly = await getSetting(db, HOURLY_KEY);
  if (hourly === undefined) {
    const first = await db
      .selectFrom('check_history')
      .select((eb) => eb.fn.min('checked_at').as('at'))
      .executeTakeFirst();
    hourly = first?.at != null ? Math.floor(Number(first.at) / HOUR) * HOUR : lastHour;
  }
  let daily = (await getSetting(db, DAILY_KEY)) ?? Math.floor(hourly / DAY) * DAY;
  let hours = 0;
  while (hourly < lastHour && hours < MAX_HOURS_PER_RUN) {
    await rollupHour(db, hourly);
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
  let deleted = 0;
  for (;;) {
    const result = await db
      .deleteFrom('check_history')
      .where('id', 'in', (eb) => eb.selectFrom('check_history').select('id').where('checked_at', '<', cutoff).limit(5_000))
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < 5_000) break;
  }
  return { hours, days, deleted };
}
