import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { readTally } from '../uptime-read.ts';
import { lastDays } from '../uptime.ts';

export const WINDOWS = { '24h': 1, '7d': 7, '30d': 30, '90d': 90 } as const;
export type UptimeWindow = keyof typeof WINDOWS;

/**
 * One resource's uptime over a window, as on the status page: `24h` is the
 * last 24 hours (hourly rollups and the raw checks of the hours not rolled up
 * yet); `Nd` the last N UTC days, each its daily rollup or else the sum of its
 * hourly ones and raw checks. Null without checks.
 */
export async function windowUptime(
  db: Kysely<Database>,
  resourceId: number,
  window: UptimeWindow,
  now = Date.now(),
): Promise<number | null> {
  const t = await readTally(db, resourceId, now);
  if (!t) return null;
  const { checks, available } = window === '24h' ? { checks: t.h24c, available: t.h24a } : lastDays(t, WINDOWS[window]);
  return checks > 0 ? (available / checks) * 100 : null;
}
