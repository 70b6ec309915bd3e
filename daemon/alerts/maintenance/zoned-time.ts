/**
 * Wall-clock time in an IANA time zone, with Intl.DateTimeFormat only (no
 * library): the offset of a zone at an instant, and the instant of a local
 * date and time. Daylight saving changes resolve as java.time and Temporal's
 * `compatible` do: a time that does not exist (spring forward) moves forward by
 * the gap, a time that exists twice (fall back) is the earlier one.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, fmt);
  }
  return fmt;
}

/** True when Intl knows the zone (an IANA name such as `Europe/Paris`, or `UTC`). */
export function isTimeZone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.length === 0 || zone.length > 100) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

export const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: Weekday;
}

/** The local date, time and weekday in `zone` at the instant `ms`. */
export function localParts(ms: number, zone: string): LocalParts {
  const p: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: p.weekday.toUpperCase().slice(0, 3) as Weekday,
  };
}

/** The zone's offset from UTC at the instant `ms`, in ms (positive east of Greenwich). */
export function zoneOffset(ms: number, zone: string): number {
  const p = localParts(ms, zone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

const DAY_MS = 86_400_000;

/**
 * The instant at which the wall clock of `zone` reads the given local date and
 * time (month 1-12). Zone transitions are at least a few days apart, so the
 * offsets a day before and a day after are the only two candidates.
 */
export function zonedInstant(zone: string, year: number, month: number, day: number, hour: number, minute: number): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const before = zoneOffset(wall - DAY_MS, zone);
  const after = zoneOffset(wall + DAY_MS, zone);
  const early = wall - before;
  const late = wall - after;
  const fits = (t: number, offset: number) => zoneOffset(t, zone) === offset;
  const candidates = [early, late].filter((t, i) => fits(t, i === 0 ? before : after));
  // Both fit: the fall-back overlap, take the earlier instant. None: the spring-forward gap,
  // the offset from before the change puts it as far after the gap as it was into it.
  return candidates.length > 0 ? Math.min(...candidates) : early;
}
