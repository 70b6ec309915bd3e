import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const WINDOWS = { '24h': 1, '7d': 7, '30d': 30, '90d': 90 } as const;
export type UptimeWindow = keyof typeof WINDOWS;

/**
 * One resource's uptime over a window, from the rollups as on the status
 * page: `24h` is the last 24 hourly rollups; `Nd` the last N UTC days, each
 * its daily rollup or else the sum of its hourly ones (today, and yesterday
 * until its daily rollup is written). Null without checks.
 */
export async function windowUptime(db: Kysely<Database>, resourceId: number, window: UptimeWindow, now = Date.now()): Promise<number | null> {
  const today = Math.floor(now / DAY) * DAY;
  const since24h = Math.floor(now / HOUR) * HOUR - 24 * HOUR;
  const firstDay = today - (WINDOWS[window] - 1) * DAY;
  const [daily, hourly] = await Promise.all([
    window === '24h' ? Promise.resolve([]) : db.selectFrom('check_rollups_daily').select(['bucket_start', 'checks', 'available'])
      .where('resource_id', '=', resourceId).where('bucket_start', '>=', firstDay).execute(),
    db.selectFrom('check_rollups_hourly').select(['bucket_start', 'checks', 'available'])
      .where('resource_id', '=', resourceId).where('bucket_start', '>=', Math.min(since24h, Math.max(firstDay, today - DAY))).execute(),
  ]);
  let checks = 0;
  let available = 0;
  if (window === '24h') {
    for (const h of hourly) if (Number(h.bucket_start) >= since24h) {
      checks += Number(h.checks);
      available += Number(h.available);
    }
  } else {
    const rolled = new Set(daily.map((d) => Math.floor(Number(d.bucket_start) / DAY)));
    for (const d of daily) {
      checks += Number(d.checks);
      available += Number(d.available);
    }
    for (const h of hourly) {
      const at = Number(h.bucket_start);
      if (at < firstDay || rolled.has(Math.floor(at / DAY))) continue;
      checks += Number(h.checks);
      available += Number(h.available);
    }
  }
  return checks > 0 ? (available / checks) * 100 : null;
}
