const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const BAR_DAYS = 90;

/** One resource's figures on a status page (percent of AVAILABLE checks, null without checks). */
export interface Uptime {
  h24: number | null;
  d30: number | null;
  d90: number | null;
  /** The 90 UTC days of the bar, oldest first. */
  daily: Array<number | null>;
}

/** Buckets of checks: a daily or hourly rollup, or the raw checks of an hour not rolled up yet. */
export interface BucketRow {
  resource_id: number | string;
  bucket_start: number | string;
  checks: number | string;
  available: number | string;
  daily: number | string;
}

/** One resource's checks per day of the bar and over the last 24 hours. */
export interface Tally {
  dayChecks: Float64Array;
  dayAvail: Float64Array;
  fromDaily: Uint8Array;
  h24c: number;
  h24a: number;
}

/** The first UTC day of the bar, for `now`. */
export function barStart(now: number): number {
  return Math.floor(now / DAY) * DAY - (BAR_DAYS - 1) * DAY;
}

/** The start of the last 24 hours: the 24 whole hours before the current one, and the current one. */
export const since24h = (now: number) => Math.floor(now / HOUR) * HOUR - 24 * HOUR;

const percent = (available: number, checks: number) => (checks > 0 ? Math.round((available / checks) * 100_000) / 1000 : null);

const emptyTally = (): Tally => ({
  dayChecks: new Float64Array(BAR_DAYS),
  dayAvail: new Float64Array(BAR_DAYS),
  fromDaily: new Uint8Array(BAR_DAYS),
  h24c: 0,
  h24a: 0,
});

/** A copy, so that the cached tally of the rollups stays as read when raw checks are added to it. */
const copyTally = (t: Tally): Tally => ({
  dayChecks: new Float64Array(t.dayChecks),
  dayAvail: new Float64Array(t.dayAvail),
  fromDaily: new Uint8Array(t.fromDaily),
  h24c: t.h24c,
  h24a: t.h24a,
});

/**
 * Adds bucket rows to per-resource tallies (in place; `copy` first copies a
 * tally it touches). A day's figure is its daily rollup, else the sum of its
 * hourly buckets: daily rows go first and a day that has one ignores the
 * others (they would count twice).
 */
export function addBuckets(into: Map<number, Tally>, rows: BucketRow[], now: number, copy = false): Map<number, Tally> {
  const first = barStart(now);
  const from24h = since24h(now);
  const copied = new Set<number>();
  for (const pass of [1, 0]) {
    for (const row of rows) {
      if (Number(row.daily) !== pass) continue;
      const id = Number(row.resource_id);
      let t = into.get(id);
      if (!t || (copy && !copied.has(id))) {
        t = t ? copyTally(t) : emptyTally();
        into.set(id, t);
        copied.add(id);
      }
      const at = Number(row.bucket_start);
      const checks = Number(row.checks);
      const available = Number(row.available);
      if (pass === 0 && at >= from24h) {
        t.h24c += checks;
        t.h24a += available;
      }
      const day = Math.floor((at - first) / DAY);
      if (day < 0 || day >= BAR_DAYS) continue;
      if (pass === 1) t.fromDaily[day] = 1;
      else if (t.fromDaily[day]) continue;
      t.dayChecks[day] += checks;
      t.dayAvail[day] += available;
    }
  }
  return into;
}

/** Checks and AVAILABLE checks of the bar's last `days` days. */
export function lastDays(t: Tally, days: number): { checks: number; available: number } {
  let checks = 0,
    available = 0;
  for (let d = BAR_DAYS - days; d < BAR_DAYS; d++) {
    checks += t.dayChecks[d];
    available += t.dayAvail[d];
  }
  return { checks, available };
}

/** The page's figures from a tally. */
export function uptimeOf(t: Tally): Uptime {
  const daily: Array<number | null> = [];
  for (let d = 0; d < BAR_DAYS; d++) daily.push(percent(t.dayAvail[d], t.dayChecks[d]));
  const d30 = lastDays(t, 30);
  const d90 = lastDays(t, BAR_DAYS);
  return { h24: percent(t.h24a, t.h24c), d30: percent(d30.available, d30.checks), d90: percent(d90.available, d90.checks), daily };
}

/**
 * Incidents open on each day of the bar, per resource: a day counts every
 * incident open at some time of it (the page's bar and the history badge).
 */
export function incidentsPerDay(
  incidents: Iterable<{ resourceId: number; openedAt: number; resolvedAt: number | null }>,
  now: number,
): Map<number, number[]> {
  const first = barStart(now);
  const perDay = new Map<number, number[]>();
  for (const i of incidents) {
    const counts = perDay.get(i.resourceId) ?? new Array<number>(BAR_DAYS).fill(0);
    const from = Math.max(0, Math.floor((i.openedAt - first) / DAY));
    const to = Math.min(BAR_DAYS - 1, Math.floor(((i.resolvedAt ?? now) - first) / DAY));
    for (let d = from; d <= to; d++) counts[d]++;
    perDay.set(i.resourceId, counts);
  }
  return perDay;
}

/** A resource without checks yet: no figure anywhere. */
export const NO_UPTIME: Uptime = { h24: null, d30: null, d90: null, daily: new Array(BAR_DAYS).fill(null) };
