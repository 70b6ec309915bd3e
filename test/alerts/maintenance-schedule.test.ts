import { describe, expect, it } from 'vitest';
import { currentOrNext, isActive, occurrencesBetween, type WindowSchedule } from '../../daemon/alerts/maintenance/schedule.ts';
import { isTimeZone, zonedInstant } from '../../daemon/alerts/maintenance/zoned-time.ts';

const Z = (iso: string) => Date.parse(iso);
const weekly = (over: Partial<Extract<WindowSchedule, { kind: 'WEEKLY' }>>): WindowSchedule => ({
  kind: 'WEEKLY',
  days: ['SUN'],
  startTime: '02:30',
  durationMinutes: 60,
  timeZone: 'America/New_York',
  ...over,
});

describe('zoned time', () => {
  it('knows IANA zones and refuses the rest', () => {
    for (const zone of ['Europe/Paris', 'Pacific/Auckland', 'America/New_York', 'UTC']) expect(isTimeZone(zone), zone).toBe(true);
    for (const zone of ['Mars/Olympus', '', 'Europe/Paris ', '+02:00x']) expect(isTimeZone(zone), zone).toBe(false);
  });

  it('resolves local times across daylight saving changes', () => {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist and moves forward by the gap.
    expect(zonedInstant('America/New_York', 2026, 3, 8, 2, 30)).toBe(Z('2026-03-08T07:30:00Z'));
    expect(zonedInstant('America/New_York', 2026, 3, 8, 1, 30)).toBe(Z('2026-03-08T06:30:00Z'));
    expect(zonedInstant('America/New_York', 2026, 3, 8, 3, 30)).toBe(Z('2026-03-08T07:30:00Z'));
    // 2026-11-01: 01:30 happens twice; the earlier (EDT) one.
    expect(zonedInstant('America/New_York', 2026, 11, 1, 1, 30)).toBe(Z('2026-11-01T05:30:00Z'));
    expect(zonedInstant('America/New_York', 2026, 11, 1, 2, 30)).toBe(Z('2026-11-01T07:30:00Z'));
    // Auckland leaves daylight saving on 2026-04-05 (NZDT +13 to NZST +12).
    expect(zonedInstant('Pacific/Auckland', 2026, 3, 30, 9, 0)).toBe(Z('2026-03-29T20:00:00Z'));
    expect(zonedInstant('Pacific/Auckland', 2026, 4, 6, 9, 0)).toBe(Z('2026-04-05T21:00:00Z'));
  });
});

describe('weekly windows', () => {
  it('start at the local time of each matching day, before and after a DST change', () => {
    const s = weekly({});
    expect(currentOrNext(s, Z('2026-03-02T00:00:00Z'))).toEqual({ start: Z('2026-03-08T07:30:00Z'), end: Z('2026-03-08T08:30:00Z') });
    expect(currentOrNext(s, Z('2026-03-09T00:00:00Z'))).toEqual({ start: Z('2026-03-15T06:30:00Z'), end: Z('2026-03-15T07:30:00Z') });
    expect(occurrencesBetween(s, Z('2026-02-28T00:00:00Z'), Z('2026-03-16T00:00:00Z')).map((o) => new Date(o.start).toISOString())).toEqual(
      ['2026-03-01T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-15T06:30:00.000Z'],
    );
  });

  it('is active from its start (included) to its end (excluded), in its own zone', () => {
    const s = weekly({ days: ['MON'], startTime: '09:00', durationMinutes: 90, timeZone: 'Pacific/Auckland' });
    const start = Z('2026-04-05T21:00:00Z'); // Monday 09:00 NZST, the day after the change
    expect(isActive(s, start - 1)).toBe(false);
    expect(isActive(s, start)).toBe(true);
    expect(isActive(s, start + 90 * 60_000 - 1)).toBe(true);
    expect(isActive(s, start + 90 * 60_000)).toBe(false);
    expect(isActive(s, Z('2026-03-29T20:30:00Z'))).toBe(true); // the Monday before, in NZDT
    expect(currentOrNext(s, start + 60_000)).toEqual({ start, end: start + 90 * 60_000 });
  });

  it('a window longer than a day that started days ago is still current', () => {
    const s = weekly({ days: ['FRI'], startTime: '22:00', durationMinutes: 3 * 1440, timeZone: 'UTC' });
    // Friday 2026-01-02 22:00 UTC until Monday 22:00.
    expect(currentOrNext(s, Z('2026-01-05T10:00:00Z'))).toEqual({ start: Z('2026-01-02T22:00:00Z'), end: Z('2026-01-05T22:00:00Z') });
  });
});

describe('one-off windows', () => {
  const s: WindowSchedule = { kind: 'ONE_OFF', startsAt: 1000, endsAt: 2000 };
  it('are current or next until they end, and nothing after', () => {
    expect(currentOrNext(s, 0)).toEqual({ start: 1000, end: 2000 });
    expect(isActive(s, 999)).toBe(false);
    expect(isActive(s, 1000)).toBe(true);
    expect(isActive(s, 2000)).toBe(false);
    expect(currentOrNext(s, 2000)).toBeUndefined();
  });
});
