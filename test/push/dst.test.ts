import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { lateAt, missedEntries, pushResource, until } from './deadline-helpers.ts';

const at = (text: string) => Date.parse(text);

/**
 * A cron schedule across both daylight saving changes of Europe/Berlin in 2027, on the daemon's
 * test clock (docs/API.md#push-checks). `30 2 * * *` with 30 minutes of grace:
 * - 2027-03-28, clocks go from 02:00 CET to 03:00 CEST: 02:30 does not exist that day, and the
 *   run is expected when the gap ends (03:00 CEST, 01:00Z; croner's choice), so late at 01:30Z;
 * - 2027-10-31, clocks go from 03:00 CEST back to 02:00 CET: 02:30 happens twice; the run is
 *   expected once, at the first (02:30 CEST, 00:30Z), so late at 01:00Z, and the second 02:30
 *   (01:30Z) expects nothing: the next run is 2027-11-01 02:30 CET (01:30Z).
 */
describe('push deadlines across DST', () => {
  let d: TestDaemon;
  const schedule = { cron: '30 2 * * *', timezone: 'Europe/Berlin', graceSeconds: 1800 };

  beforeAll(async () => {
    d = await startDaemon({ args: [...TEST_CLOCK_ARGS, '--scheduler', 'off'] });
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('spring forward: 02:30 does not exist, the run is expected at 03:00 CEST', async () => {
    await moveClock(d, { at: '2027-03-27T12:00:00Z' });
    const id = await pushResource(d, 'spring', schedule);
    expect(await lateAt(d, id)).toBe(at('2027-03-28T01:30:00Z'));

    // One second before its deadline nothing happens (the next check's deadline shows the judge ran).
    const before = await pushResource(d, 'spring-probe', { periodSeconds: 48_570, graceSeconds: 0 });
    expect(await lateAt(d, before)).toBeLessThan(at('2027-03-28T01:29:59Z'));
    await moveClock(d, { at: '2027-03-28T01:29:59Z' });
    await until('the earlier deadline', async () => (await missedEntries(d, before)).length === 1);
    expect(await missedEntries(d, id)).toEqual([]);

    await moveClock(d, { at: '2027-03-28T01:30:00Z' });
    const entry = await until('the missed run', async () => (await missedEntries(d, id))[0]);
    expect(entry.message).toBe('no ping yet; expected by 2027-03-28T01:00:00Z plus 30m grace');
    expect(entry.checkedAt).toBeGreaterThanOrEqual(at('2027-03-28T01:30:00Z'));
    console.log(`spring: judged ${entry.checkedAt - at('2027-03-28T01:30:00Z')} ms after the deadline`);
  });

  it('fall back: 02:30 happens twice, the run is expected at the first one only', async () => {
    await moveClock(d, { at: '2027-10-30T12:00:00Z' });
    const id = await pushResource(d, 'autumn', schedule);
    expect(await lateAt(d, id)).toBe(at('2027-10-31T01:00:00Z'));

    await moveClock(d, { at: '2027-10-31T01:00:00Z' });
    const entry = await until('the missed run', async () => (await missedEntries(d, id))[0]);
    expect(entry.message).toBe('no ping yet; expected by 2027-10-31T00:30:00Z plus 30m grace');
    expect(entry.checkedAt).toBeGreaterThanOrEqual(at('2027-10-31T01:00:00Z'));

    // A check created between the two 02:30s expects the next day's, not the repeated hour's.
    const between = await pushResource(d, 'autumn-between', schedule);
    expect(await lateAt(d, between)).toBe(at('2027-11-01T02:00:00Z'));
    const probe = await pushResource(d, 'autumn-probe', { periodSeconds: 3000, graceSeconds: 0 });
    await moveClock(d, { at: '2027-10-31T02:00:01Z' }); // past the second 02:30 plus grace
    await until('the probe', async () => (await missedEntries(d, probe)).length === 1);
    expect(await missedEntries(d, between)).toEqual([]);

    await moveClock(d, { at: '2027-11-01T02:00:00Z' });
    const next = await until('the next day', async () => (await missedEntries(d, between))[0]);
    expect(next.message).toBe('no ping yet; expected by 2027-11-01T01:30:00Z plus 30m grace');
  });
});
