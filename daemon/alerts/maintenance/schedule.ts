import { localParts, WEEKDAYS, type Weekday, zonedInstant } from './zoned-time.ts';

/** When a maintenance window is open: once, or every week on some days in a time zone. */
export type WindowSchedule =
  | { kind: 'ONE_OFF'; startsAt: number; endsAt: number }
  | { kind: 'WEEKLY'; days: Weekday[]; startTime: string; durationMinutes: number; timeZone: string };

/** One opening of a window, epoch ms, end excluded. */
export interface Occurrence {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

/**
 * Occurrences of a weekly window that start on local dates from `fromDay` to
 * `toDay` days after the local date of `at` (negative: before). Each start is
 * the local `startTime` of its day in the window's zone, so it follows daylight
 * saving; the duration is elapsed time (a 90-minute window lasts 90 minutes
 * even across a change).
 */
function weeklyOccurrences(s: Extract<WindowSchedule, { kind: 'WEEKLY' }>, at: number, fromDay: number, toDay: number): Occurrence[] {
  const [hour, minute] = s.startTime.split(':').map(Number);
  const today = localParts(at, s.timeZone);
  const out: Occurrence[] = [];
  for (let offset = fromDay; offset <= toDay; offset++) {
    // Calendar arithmetic on the local date, in UTC where days have no DST.
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const weekday = WEEKDAYS[date.getUTCDay()];
    if (!s.days.includes(weekday)) continue;
    const start = zonedInstant(s.timeZone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hour, minute);
    out.push({ start, end: start + s.durationMinutes * 60_000 });
  }
  return out;
}

/**
 * The occurrence in progress at `at` (the one ending last, if several
 * overlap), else the next one to start; undefined when there is none (a
 * one-off window that is over).
 */
export function currentOrNext(s: WindowSchedule, at: number): Occurrence | undefined {
  if (s.kind === 'ONE_OFF') return s.endsAt > at ? { start: s.startsAt, end: s.endsAt } : undefined;
  const back = Math.ceil(s.durationMinutes / 1440) + 1;
  const list = weeklyOccurrences(s, at, -back, 8);
  let current: Occurrence | undefined;
  let next: Occurrence | undefined;
  for (const o of list) {
    if (o.start <= at && at < o.end) {
      if (!current || o.end > current.end) current = o;
    } else if (o.start > at && (!next || o.start < next.start)) {
      next = o;
    }
  }
  return current ?? next;
}

/** True while the window is open at `at`. */
export function isActive(s: WindowSchedule, at: number): boolean {
  const o = currentOrNext(s, at);
  return o !== undefined && o.start <= at && at < o.end;
}

/** Occurrences overlapping [from, to), in start order (the status page's "upcoming"). */
export function occurrencesBetween(s: WindowSchedule, from: number, to: number): Occurrence[] {
  if (s.kind === 'ONE_OFF') return s.endsAt > from && s.startsAt < to ? [{ start: s.startsAt, end: s.endsAt }] : [];
  const back = Math.ceil(s.durationMinutes / 1440) + 1;
  const days = Math.ceil((to - from) / DAY_MS) + 1;
  return weeklyOccurrences(s, from, -back, days)
    .filter((o) => o.end > from && o.start < to)
    .sort((a, b) => a.start - b.start);
}
