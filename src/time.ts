/**
 * Datetimes on the wire are `YYYY-MM-DDTHH:MM:SS`: local time in the daemon's
 * zone (TZ, UTC by default), no offset, as the seed fixes. Storage keeps epoch
 * milliseconds so that the zone is a presentation concern only.
 */

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?$/;
const WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/i;

export const LOCAL_DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$';

// Read once: process.env is a slow native lookup, and the zone is fixed for
// the life of a process (tests set TZ before starting the daemon).
const ZONE = process.env.TZ || 'UTC';
function zoneName(): string {
  return ZONE;
}

let cached: { zone: string; fmt: Intl.DateTimeFormat } | undefined;
function formatter(): Intl.DateTimeFormat {
  const zone = zoneName();
  if (cached?.zone !== zone) {
    cached = {
      zone,
      fmt: new Intl.DateTimeFormat('en-CA', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }),
    };
  }
  return cached.fmt;
}

function isUtc(zone: string): boolean {
  return zone === 'UTC' || zone === 'Etc/UTC' || zone === 'GMT' || zone === ':UTC';
}

/** Epoch ms to the wire form in the daemon's zone. */
export function formatDateTime(ms: number): string {
  if (isUtc(zoneName())) return new Date(ms).toISOString().slice(0, 19);
  const p: Record<string, string> = {};
  for (const part of formatter().formatToParts(new Date(ms))) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

export function formatNullable(ms: number | null | undefined): string | null {
  return ms == null ? null : formatDateTime(ms);
}

/** Offset of the daemon's zone from UTC at a given instant, in ms. */
function zoneOffset(ms: number): number {
  const local = formatDateTime(ms);
  const m = LOCAL.exec(local)!;
  return civil(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6])! - Math.floor(ms / 1000) * 1000;
}

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Wall-clock fields as UTC epoch ms, or undefined when they name no instant
 * of the calendar: month 1-12, day within the month (leap years included),
 * hour 0-23, minute and second 0-59. `24:00` and the leap second `:60` are
 * refused rather than rolled over (epoch ms cannot hold a leap second).
 */
function civil(y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  if (d > (mo === 2 && isLeap(y) ? 29 : DAYS[mo - 1])) return undefined;
  const date = new Date(Date.UTC(2000, 0, 1, h, mi, s, ms));
  date.setUTCFullYear(y, mo - 1, d); // not Date.UTC(y, …): it reads years 0-99 as 1900-1999
  return date.getTime();
}

/**
 * Parses an input datetime: the wire form (local to the daemon's zone) or any
 * ISO-8601 date-time with an offset. Returns undefined when it is neither, or
 * when it is not a real date and time (2026-02-30, T24:00, :60).
 */
export function parseDateTime(text: string): number | undefined {
  const o = WITH_OFFSET.exec(text);
  if (o) {
    const ms = o[7] ? Number(o[7].slice(0, 3).padEnd(3, '0')) : 0;
    const utc = civil(+o[1], +o[2], +o[3], +o[4], +o[5], +(o[6] ?? 0), ms);
    if (utc === undefined) return undefined;
    if (o[8]) return utc;
    const [oh, om] = [+o[10], +o[11]];
    if (oh > 23 || om > 59) return undefined;
    return utc - (o[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const m = LOCAL.exec(text);
  if (!m) return undefined;
  const wall = civil(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6]);
  if (wall === undefined) return undefined;
  if (isUtc(zoneName())) return wall;
  // Two passes settle the offset across a DST change.
  let guess = wall - zoneOffset(wall);
  guess = wall - zoneOffset(guess);
  return guess;
}
