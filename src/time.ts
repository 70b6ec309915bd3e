/**
 * Datetimes on the wire are `YYYY-MM-DDTHH:MM:SS`: local time in the daemon's
 * zone (TZ, UTC by default), no offset, as the seed fixes. Storage keeps epoch
 * milliseconds so that the zone is a presentation concern only.
 */

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?$/;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

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
        timeZone: zone, hourCycle: 'h23',
        year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
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
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) - Math.floor(ms / 1000) * 1000;
}

/**
 * Parses an input datetime: the wire form (local to the daemon's zone) or any
 * ISO-8601 date-time with an offset. Returns undefined when it is neither.
 */
export function parseDateTime(text: string): number | undefined {
  if (WITH_OFFSET.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  const m = LOCAL.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [+m[1], +m[2], +m[3], +m[4], +m[5], +m[6]];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  if (new Date(wall).getUTCDate() !== d) return undefined; // 2026-02-30 and the like
  if (isUtc(zoneName())) return wall;
  // Two passes settle the offset across a DST change.
  let guess = wall - zoneOffset(wall);
  guess = wall - zoneOffset(guess);
  return guess;
}
