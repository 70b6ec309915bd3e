import type { Kysely } from 'kysely';
import { scheduleOf } from '../alerts/maintenance/cache.ts';
import { occurrencesBetween } from '../alerts/maintenance/schedule.ts';
import type { Database } from '../store/schema.ts';
import { parseIds } from './json-ids.ts';

/**
 * Maintenance windows as a status page shows them: each occurrence that is
 * on now or starts within the horizon, by the alerts capability's schedules
 * (one-off, or weekly in an IANA zone, DST-correct). Read from the table on
 * each build rather than through the alerts capability's in-memory cache,
 * which reloads once a minute: a page rebuilt after a window was made shows it.
 */
export interface WindowOccurrence {
  id: number;
  name: string;
  startsAt: number;
  endsAt: number;
  resourceIds: number[];
  groupIds: number[];
}

/** Occurrences that are on at `now` or start before `now + horizonMs`, soonest first. */
export async function readMaintenanceOccurrences(db: Kysely<Database>, now: number, horizonMs: number): Promise<WindowOccurrence[]> {
  const rows = await db.selectFrom('maintenance_windows').selectAll().execute();
  const out: WindowOccurrence[] = [];
  for (const row of rows) {
    let spans: Array<{ start: number; end: number }>;
    try {
      spans = occurrencesBetween(scheduleOf(row), now, now + Math.max(1, horizonMs));
    } catch {
      continue; // an unknown time zone: refused by the maintenance API on write; nothing to show
    }
    for (const { start, end } of spans) {
      out.push({ id: Number(row.id), name: row.name, startsAt: start, endsAt: end, resourceIds: parseIds(row.resource_ids), groupIds: parseIds(row.group_ids) });
    }
  }
  return out.sort((a, b) => a.startsAt - b.startsAt || a.id - b.id);
}

/** Whether an occurrence covers a resource (listed, or one of its groups listed). */
export function covers(w: WindowOccurrence, resourceId: number, groupIds: Iterable<number>): boolean {
  if (w.resourceIds.includes(resourceId)) return true;
  for (const g of groupIds) if (w.groupIds.includes(g)) return true;
  return false;
}
