import { type Kysely, sql } from 'kysely';
import type { Database } from '../store/schema.ts';

const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const BAR_DAYS = 90;

/** One resource's figures on a status page, from the rollups (percent of AVAILABLE checks, null without checks). */
export interface Uptime {
  h24: number | null;
  d30: number | null;
  d90: number | null;
  /** The 90 UTC days of the bar, oldest first. */
  daily: Array<number | null>;
}

/** The first UTC day of the bar, for `now`. */
export function barStart(now: number): number {
  return Math.floor(now / DAY) * DAY - (BAR_DAYS - 1) * DAY;
}

const percent = (available: number, checks: number) => (checks > 0 ? Math.round((available / checks) * 100_000) / 1000 : null);

/**
 * The uptime of every resource in `groupIds` (every grouped resource when
 * empty), in ONE query over both rollup tables: the daily rollups of the bar's
 * days, and the hourly rollups from the start of yesterday (the last 24 hours,
 * and the days whose daily rollup is not written yet). A day's figure is its
 * daily rollup, else the sum of its hourly ones. The current hour is not
 * rolled up yet, so figures lag by up to an hour (docs/DECISIONS.md).
 */
export async function readUptime(db: Kysely<Database>, groupIds: number[], now = Date.now()): Promise<Map<number, Uptime>> {
  const first = barStart(now);
  const yesterday = Math.floor(now / DAY) * DAY - DAY;
  const since24h = Math.floor(now / HOUR) * HOUR - 24 * HOUR;
  const members = db.selectFrom('resource_groups').select('resource_groups.resource_id')
    .$if(groupIds.length > 0, (q) => q.where('resource_groups.group_id', 'in', groupIds));
  const rows = await db.selectFrom('check_rollups_daily')
    .select(['resource_id', 'bucket_start', 'checks', 'available', sql<number>`0`.as('hourly')])
    .where('bucket_start', '>=', first).where('resource_id', 'in', members)
    .unionAll(db.selectFrom('check_rollups_hourly')
      .select(['resource_id', 'bucket_start', 'checks', 'available', sql<number>`1`.as('hourly')])
      .where('bucket_start', '>=', Math.min(yesterday, since24h)).where('resource_id', 'in', members))
    .execute();

  interface Acc { dayChecks: Float64Array; dayAvail: Float64Array; fromDaily: Uint8Array; h24c: number; h24a: number }
  const acc = new Map<number, Acc>();
  const get = (id: number) => {
    let a = acc.get(id);
    if (!a) {
      a = { dayChecks: new Float64Array(BAR_DAYS), dayAvail: new Float64Array(BAR_DAYS), fromDaily: new Uint8Array(BAR_DAYS), h24c: 0, h24a: 0 };
      acc.set(id, a);
    }
    return a;
  };
  // Daily rows first: a day that has one ignores its hourly rows (they would count twice).
  for (const pass of [0, 1]) {
    for (const row of rows) {
      if (Number(row.hourly) !== pass) continue;
      const a = get(Number(row.resource_id));
      const at = Number(row.bucket_start);
      const checks = Number(row.checks);
      const available = Number(row.available);
      const day = Math.floor((at - first) / DAY);
      if (pass === 1 && at >= since24h) {
        a.h24c += checks;
        a.h24a += available;
      }
      if (day < 0 || day >= BAR_DAYS) continue;
      if (pass === 0) a.fromDaily[day] = 1;
      else if (a.fromDaily[day]) continue;
      a.dayChecks[day] += checks;
      a.dayAvail[day] += available;
    }
  }
  const out = new Map<number, Uptime>();
  for (const [id, a] of acc) {
    const daily: Array<number | null> = [];
    let c30 = 0, a30 = 0, c90 = 0, a90 = 0;
    for (let d = 0; d < BAR_DAYS; d++) {
      daily.push(percent(a.dayAvail[d], a.dayChecks[d]));
      c90 += a.dayChecks[d];
      a90 += a.dayAvail[d];
      if (d >= BAR_DAYS - 30) {
        c30 += a.dayChecks[d];
        a30 += a.dayAvail[d];
      }
    }
    out.set(id, { h24: percent(a.h24a, a.h24c), d30: percent(a30, c30), d90: percent(a90, c90), daily });
  }
  return out;
}

/** A resource without rollups yet: no figure anywhere. */
export const NO_UPTIME: Uptime = { h24: null, d30: null, d90: null, daily: new Array(BAR_DAYS).fill(null) };
