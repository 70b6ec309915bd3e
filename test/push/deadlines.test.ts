import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, fieldsOf } from '../helpers/http.ts';
import { clockRequest, moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { lateAt, metric, missedEntries, pushResource, pushRow, until } from './deadline-helpers.ts';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The deadline judge on one daemon (docs/API.md#push-checks): a check that is never pinged is
 * late at its creation plus period plus grace, recorded NOT_AVAILABLE with MISSED_PING once,
 * never before its deadline; inactive and deleted checks are not judged; a schedule edit moves
 * the deadline. The daemon's test clock crosses the hours; nothing sleeps.
 */
describe('push deadlines', () => {
  let d: TestDaemon;

  beforeAll(async () => {
    d = await startDaemon({ args: [...TEST_CLOCK_ARGS, '--scheduler', 'off'] });
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  /** A check with a short deadline made after the others: once it is judged, so would they have been. */
  async function sentinel(name: string, periodSeconds: number): Promise<number> {
    return pushResource(d, name, { periodSeconds, graceSeconds: 0 });
  }

  it('the test clock moves forward only, by an instant or a number of seconds', async () => {
    const before = Date.parse(`${await moveClock(d, { advanceSeconds: 0 })}Z`);
    const later = Date.parse(`${await moveClock(d, { advanceSeconds: 3600 })}Z`);
    expect(later - before).toBeGreaterThanOrEqual(3600_000);
    const day = Math.ceil(later / 1000) * 1000 + 86_400_000;
    expect(await moveClock(d, { at: day })).toBe(iso(day).slice(0, 19));

    const back = expectProblem(await clockRequest(d, { at: iso(later) }), 400);
    expect(back.errors).toEqual([{ field: 'at', message: expect.stringContaining('only moves forward') }]);
    expect(fieldsOf(expectProblem(await clockRequest(d, {}), 400))).toEqual(['at']);
    expect(fieldsOf(expectProblem(await clockRequest(d, { at: iso(day + 1000), advanceSeconds: 1 }), 400))).toEqual(['at']);
    expect(fieldsOf(expectProblem(await clockRequest(d, { advanceSeconds: -1 }), 400))).toEqual(['advanceSeconds']);
    expect(fieldsOf(expectProblem(await clockRequest(d, { at: 'tomorrow' }), 400))).toEqual(['at']);
    expectProblem(await clockRequest(d, { advanceSeconds: 1 }, null), 401);
  });

  it('a check never pinged turns NOT_AVAILABLE with MISSED_PING at creation plus period plus grace, once', async () => {
    const id = await pushResource(d, 'nightly-backup', { periodSeconds: 3600, graceSeconds: 1800 });
    const late = await lateAt(d, id);
    const created = late - 5400_000;

    await moveClock(d, { at: late });
    const entry = await until('the missed deadline', async () => (await missedEntries(d, id))[0]);
    // Judged at its deadline, never before: the entry's time is the judge's clock when it found it due.
    expect(entry.checkedAt).toBeGreaterThanOrEqual(late);
    console.log(`judged ${entry.checkedAt - late} ms after the deadline (test clock jump)`);
    expect(entry.message).toBe(`no ping yet; expected by ${iso(created + 3600_000)} plus 30m grace`);
    const resource = await d.admin.call(operations.getAdminResource, { params: { id } });
    expect(resource.currentStatus).toBe('not_available');
    expect(resource.latestErrorCode).toBe('MISSED_PING');
    expect((await pushRow(d, id)).lateAt).toBeNull(); // judged: it waits for a ping

    // Far past its deadline and another check's: still one entry.
    const s = await sentinel('sentinel-once', 600);
    await moveClock(d, { advanceSeconds: 86_400 });
    await until('the sentinel', async () => (await missedEntries(d, s)).length === 1);
    expect(await missedEntries(d, id)).toHaveLength(1);
  });

  it('an inactive check is not judged, a deleted one is forgotten, a schedule edit moves the deadline', async () => {
    const paused = await pushResource(d, 'paused-job', { periodSeconds: 600, graceSeconds: 0 });
    await d.admin.call(operations.updateResource, { params: { id: paused }, body: { active: false } as never });
    const deleted = await pushResource(d, 'deleted-job', { periodSeconds: 600, graceSeconds: 0 });
    await d.admin.call(operations.deleteResource, { params: { id: deleted } });
    const edited = await pushResource(d, 'edited-job', { periodSeconds: 600, graceSeconds: 0 });
    const before = await lateAt(d, edited);
    await d.admin.call(operations.updateResource, { params: { id: edited }, body: { periodSeconds: 7200 } as never });
    const after = await lateAt(d, edited);
    expect(after - before).toBe(6600_000);

    const s = await sentinel('sentinel-edits', 1200);
    await moveClock(d, { advanceSeconds: 1300 });
    await until('the sentinel', async () => (await missedEntries(d, s)).length === 1);
    expect(await missedEntries(d, paused)).toEqual([]);
    expect(await missedEntries(d, edited)).toEqual([]);

    await moveClock(d, { at: after });
    const entry = await until('the edited deadline', async () => (await missedEntries(d, edited))[0]);
    expect(entry.checkedAt).toBeGreaterThanOrEqual(after);
    expect(d.logs.filter((l) => Number(l.level) >= 40)).toEqual([]);
  });

  it('counts missed deadlines and the checks late now', async () => {
    const late = await until('the judged checks', async () => {
      const n = await metric(d, 'monctl_push_late');
      return n >= 4 ? n : undefined;
    });
    // nightly-backup, two sentinels and edited-job; paused-job is inactive.
    expect(late).toBe(4);
    expect(await metric(d, 'monctl_push_missed_total')).toBe(4);
    expect(await metric(d, 'monctl_push_judge_delay_seconds_count')).toBe(4);
  });
});
