import { afterEach, describe, expect, it } from 'vitest';
import { DAY, HOUR, p95, runRollups } from '../../daemon/probes/rollups.ts';
import { insertResources, openContext, type TestContext } from './helpers/context.ts';
import { writeHistory } from './helpers/history.ts';

let tc: TestContext | undefined;
afterEach(async () => {
  await tc?.close();
  tc = undefined;
});

describe('history rollups and retention', () => {
  it('p95 is the nearest-rank percentile', () => {
    expect(p95([])).toBe(0);
    expect(p95([5])).toBe(5);
    expect(p95(Array.from({ length: 100 }, (_, i) => 100 - i))).toBe(95);
    expect(p95(Array.from({ length: 20 }, (_, i) => i + 1))).toBe(19);
  });

  it('rolls complete hours and days up, then deletes raw rows past the retention', async () => {
    tc = await openContext();
    const db = tc.ctx.db;
    const [a, b] = await insertResources(tc.ctx, [{ target: 'http://127.0.0.1:9/' }, { target: 'http://127.0.0.1:9/' }]);
    const day0 = Math.floor(Date.now() / DAY) * DAY - 40 * DAY; // 40 days ago, UTC midnight
    const rows = [];
    // Resource a: 20 checks an hour for the first 24 hours, one of them down per hour, durations 1..20 ms.
    for (let h = 0; h < 24; h++) {
      for (let i = 0; i < 20; i++) {
        rows.push({
          resource_id: a,
          status: i === 0 ? 'NOT_AVAILABLE' : 'AVAILABLE',
          message: 'x',
          error_code: null,
          checked_at: day0 + h * HOUR + i * 1000,
          duration_ms: i + 1,
        });
      }
    }
    // Resource b: a few checks 39 days later (inside the retention).
    const recent = day0 + 39 * DAY + 3 * HOUR;
    for (let i = 0; i < 4; i++)
      rows.push({ resource_id: b, status: 'AVAILABLE', message: 'x', error_code: null, checked_at: recent + i, duration_ms: 10 * (i + 1) });
    await writeHistory(db, rows);

    const now = day0 + 40 * DAY + 30 * 60_000;
    let total = { hours: 0, days: 0, deleted: 0 };
    for (;;) {
      const r = await runRollups(db, 30, now);
      total = { hours: total.hours + r.hours, days: total.days + r.days, deleted: total.deleted + r.deleted };
      if (r.hours === 0) break;
    }
    expect(total.hours).toBe(40 * 24);
    expect(total.days).toBe(40);
    expect(total.deleted).toBe(480); // resource a's rows are 40 days old; b's stay

    const hourly = await db.selectFrom('check_rollups_hourly').selectAll().where('resource_id', '=', a).orderBy('bucket_start').execute();
    expect(hourly).toHaveLength(24);
    expect(hourly[5]).toMatchObject({
      bucket_start: day0 + 5 * HOUR,
      checks: 20,
      available: 19,
      duration_sum_ms: 210,
      duration_p95_ms: 19,
    });
    const daily = await db.selectFrom('check_rollups_daily').selectAll().orderBy('bucket_start').execute();
    expect(daily).toEqual([
      { resource_id: a, bucket_start: day0, checks: 480, available: 456, duration_sum_ms: 24 * 210, duration_p95_ms: 19 },
      { resource_id: b, bucket_start: day0 + 39 * DAY, checks: 4, available: 4, duration_sum_ms: 100, duration_p95_ms: 40 },
    ]);
    const left = await db.selectFrom('check_history').select('resource_id').execute();
    expect(left.every((r) => r.resource_id === b)).toBe(true);
    expect(left).toHaveLength(4);

    // Idempotent: running again changes nothing.
    expect(await runRollups(db, 30, now)).toEqual({ hours: 0, days: 0, deleted: 0 });
  });
});
