import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { parseIds } from './json-ids.ts';

/**
 * Maintenance windows as the status page needs them, read straight from the
 * `maintenance_windows` table (migration 0008). The alerts capability owns
 * these windows (issue 15); until its own occurrence code is merged this is a
 * small reader of the same columns: a ONE_OFF window is its start and end, a
 * WEEKLY one recurs on its days at its start time in its IANA time zone.
 */
export interface WindowOccurrence {
  id: number;
  name: string;
  startsAt: number;
  endsAt: number;
  resourceIds: number[];
  groupIds: number[];
}

const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(ms: number, zone: string): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  let fmt = formatters.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, fmt);
  }
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return { y: p.year, m: p.month, d: p.day, h: p.hour, mi: p.minute, s: p.second };
}

/** The instant at which the wall clock of `zone` reads the given date and time (two passes settle a DST change). */
export function zonedTime(y: number, m: number, d: number, h: number, mi: number, zone: string): number {
  const wall = Date.UTC(y, m - 1, d, h, mi);
  const offset = (t: number) => {
    const w = wallClock(t, zone);
    return Date.UTC(w.y, w.m - 1, w.d, w.h, w.mi, w.s) - Math.floor(t / 1000) * 1000;
  };
  let guess = wall - offset(wall);
  guess = wall - offset(guess);
  return guess;
}

function weeklyOccurrences(row: { days: string | null; start_time: string | null; duration_minutes: number | null; time_zone: string | null }, from: number, to: number): Array<[number, number]> {
  const days = new Set(((): string[] => {
    try {
      const v: unknown = JSON.parse(row.days ?? '[]');
      return Array.isArray(v) ? v.map(String) : [];
    } catch {
      return [];
    }
  })());
  const time = /^(\d{1,2}):(\d{2})$/.exec(row.start_time ?? '');
  const minutes = Number(row.duration_minutes);
  const zone = row.time_zone ?? 'UTC';
  if (!time || !(minutes > 0) || days.size === 0) return [];
  const out: Array<[number, number]> = [];
  try {
    // Local dates from a week before `from` (a window may last days) to the end of the horizon.
    const base = wallClock(from, zone);
    const span = Math.ceil((to - from) / 86_400_000) + 1;
    for (let i = -8; i <= span; i++) {
      const date = new Date(Date.UTC(base.y, base.m - 1, base.d + i));
      if (!days.has(WEEKDAYS[date.getUTCDay()])) continue;
      const start = zonedTime(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), Number(time[1]), Number(time[2]), zone);
      const end = start + minutes * 60_000;
      if (end > from && start < to) out.push([start, end]);
    }
  } catch {
    return []; // an unknown time zone: the alerts API refuses it on write; nothing to show here
  }
  return out;
}

/** Occurrences that are on at `now` or start before `now + horizonMs`, soonest first. */
export async function readMaintenanceOccurrences(db: Kysely<Database>, now: number, horizonMs: number): Promise<WindowOccurrence[]> {
  const rows = await db.selectFrom('maintenance_windows').selectAll().execute();
  const out: WindowOccurrence[] = [];
  const to = now + horizonMs;
  for (const row of rows) {
    const spans: Array<[number, number]> = row.kind === 'WEEKLY'
      ? weeklyOccurrences(row, now, to)
      : row.starts_at !== null && row.ends_at !== null && Number(row.ends_at) > now && Number(row.starts_at) < to
        ? [[Number(row.starts_at), Number(row.ends_at)]] : [];
    for (const [startsAt, endsAt] of spans) {
      out.push({ id: Number(row.id), name: row.name, startsAt, endsAt, resourceIds: parseIds(row.resource_ids), groupIds: parseIds(row.group_ids) });
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
