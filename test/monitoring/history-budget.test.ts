import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_GRACE_SECONDS, DEFAULT_CERT_EXPIRY_DAYS } from '../../daemon/config/incident-defaults.ts';
import { MaintenanceCache } from '../../daemon/alerts/maintenance/cache.ts';
import { Bus } from '../../daemon/bus.ts';
import { EventHub } from '../../daemon/events/channel.ts';
import { createLogger } from '../../daemon/logger.ts';
import { recordResults, type ResultWriterDeps } from '../../daemon/probes/results.ts';
import { HOUR } from '../../daemon/probes/rollups.ts';
import type { ProbeResult } from '../../daemon/probes/types.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';
import { parseDateTime } from '../../src/time.ts';
import { size } from '../../daemon/config/types.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { until } from '../push/deadline-helpers.ts';
import { call, ok, type Caller } from './helpers.ts';

// The size budget against a real daemon (SQLite, or PostgreSQL in that project): a budget of one
// byte thins every rolled-up hour to its state changes, keeps the rollups, and the history
// endpoint says from when it keeps every check. Checks are written through the daemon's own
// writer with chosen times; a move of the test clock runs the history job.
let d: TestDaemon;
let admin: Caller;
let store: OpenedStore;
let ctx: ResultWriterDeps;
const hour = Math.floor(Date.now() / HOUR) * HOUR;

beforeAll(async () => {
  d = await startDaemon({ args: ['--scheduler', 'off', '--history-max-bytes', '1', ...TEST_CLOCK_ARGS] });
  admin = { kind: 'key', token: d.adminKey };
  store = await openStore(d.dataDir, d.databaseUrl);
  const base = { db: store.db, bus: new Bus(), log: createLogger('silent') };
  ctx = {
    ...base,
    events: new EventHub(),
    maintenance: new MaintenanceCache(base),
    config: { incidents: { agentGraceSeconds: DEFAULT_AGENT_GRACE_SECONDS, certExpiryDays: [...DEFAULT_CERT_EXPIRY_DAYS] } },
  };
});
afterAll(async () => {
  await store?.close();
  await d?.stop();
});

const result = (up: boolean, checkedAt: number): ProbeResult => ({
  status: up ? 'AVAILABLE' : 'NOT_AVAILABLE',
  message: up ? '200 OK' : '503 Service Unavailable',
  errorCode: up ? null : '503',
  durationMs: 20,
  checkedAt,
});

describe('history with a size budget', () => {
  it('keeps the state changes and the rollups past the budget, and the history endpoint says where every check is kept', async () => {
    const { id } = await ok(
      call(d, admin, 'POST', '/api/resources', { name: 'budget', resourceType: 'HTTP', target: 'http://127.0.0.1:1/', active: false }),
    );
    // Hours H-4 .. H-2: 12 checks an hour, down for checks 5 and 6 of each hour (two changes per hour,
    // plus the very first check); then 3 checks in the hour under way, not rolled up yet.
    const past = [4, 3, 2].flatMap((ago) =>
      Array.from({ length: 12 }, (_, i) => ({ at: hour - ago * HOUR + i * 300_000, up: i !== 5 && i !== 6 })),
    );
    const now = Array.from({ length: 3 }, (_, i) => ({ at: hour + i, up: true }));
    for (const { at, up } of [...past, ...now]) await recordResults(ctx, [{ resourceId: id, result: result(up, at) }]);
    const history = async () => {
      const res = await call(d, admin, 'GET', `/api/resources/${id}/history?limit=100`);
      return {
        entries: (await ok(res)) as Array<{ checkedAt: string; status: string }>,
        from: String(res.headers['history-complete-from']),
      };
    };
    const before = await history();
    expect(before.entries).toHaveLength(39);
    expect(parseDateTime(before.from)).toBe(hour - 4 * HOUR);

    await moveClock(d, { advanceSeconds: 1 });
    const after = await until('the budget thinned history', async () => {
      const h = await history();
      return parseDateTime(h.from)! >= hour - HOUR ? h : undefined;
    });
    const from = parseDateTime(after.from)!;
    const kept = after.entries.map((e) => ({ at: parseDateTime(e.checkedAt)!, status: e.status })).reverse();
    // Before the kept range: the state changes only (first check, down, up again, in each hour).
    const changes = past.filter((c, i) => i === 0 || c.up !== past[i - 1].up);
    expect(kept.filter((e) => e.at < from)).toEqual(
      changes.map((c) => ({ at: Math.floor(c.at / 1000) * 1000, status: c.up ? 'AVAILABLE' : 'NOT_AVAILABLE' })),
    );
    // From it: every check.
    expect(kept.filter((e) => e.at >= from)).toHaveLength([...past, ...now].filter((c) => c.at >= from).length);
    // The rollups count every check of the thinned hours.
    const rollups = await store.db
      .selectFrom('check_rollups_hourly')
      .select(['bucket_start', 'checks', 'available'])
      .where('resource_id', '=', id)
      .orderBy('bucket_start')
      .execute();
    expect(rollups.map((r) => [Number(r.bucket_start), Number(r.checks), Number(r.available)]).slice(0, 3)).toEqual([
      [hour - 4 * HOUR, 12, 10],
      [hour - 3 * HOUR, 12, 10],
      [hour - 2 * HOUR, 12, 10],
    ]);
  });
});

describe('--history-max-bytes', () => {
  it('takes sizes as 512MiB, 10GiB, 1.5GiB or bytes, and refuses anything else', () => {
    expect(size.parse('512MiB', true)).toBe(512 * 2 ** 20);
    expect(size.parse('10GiB', true)).toBe(10 * 2 ** 30);
    expect(size.parse(' 1.5gib ', true)).toBe(1.5 * 2 ** 30);
    expect(size.parse('4096', true)).toBe(4096);
    expect(size.parse(65536, false)).toBe(65536);
    for (const bad of ['10GB', '-1', '0', 'lots', '']) expect(() => size.parse(bad, true)).toThrow(/512MiB/);
    expect(size.format(10 * 2 ** 30)).toBe('10GiB');
    expect(size.format(1000)).toBe('1000');
  });
});
