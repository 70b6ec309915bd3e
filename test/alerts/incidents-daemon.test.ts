import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { checkNow, httpResource, outbox, readDb, type Target, target } from './helpers.ts';

/**
 * Resource incidents end to end: a real daemon without the scheduler, checks
 * driven by `POST /api/resources/{id}/check` against a real loopback target,
 * and the outbox read from the daemon's SQLite file.
 */
describe('resource incidents on a real daemon', () => {
  let d: TestDaemon;
  let t: Target;

  beforeAll(async () => {
    [d, t] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), target()]);
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), t?.close()]);
  });

  const incidents = (id: number) =>
    readDb<{ id: number; opened_at: number; resolved_at: number | null; cause_message: string; cause_error_code: string; checks: number }>(
      d,
      'SELECT * FROM incidents WHERE resource_id = ? ORDER BY id',
      id,
    );

  it('flapping with threshold 3 opens nothing; three failures open one incident; recovery resolves it', async () => {
    const id = await httpResource(d, 'flappy', t.url);
    for (const status of [200, 503, 200, 503, 503, 200, 503, 200]) {
      t.set(status);
      await checkNow(d, id);
    }
    expect(await incidents(id)).toEqual([]);
    expect(await outbox(d, 'resource_id = ?', id)).toEqual([]);

    t.set(500);
    const first = await checkNow(d, id);
    t.set(503);
    await checkNow(d, id);
    expect(await incidents(id)).toEqual([]);
    await checkNow(d, id);
    const [incident] = await incidents(id);
    expect(incident).toMatchObject({ resolved_at: null, cause_message: '500 Internal Server Error', cause_error_code: '500', checks: 3 });
    expect(new Date(incident.opened_at).toISOString().slice(0, 19)).toBe(first.checkedAt);
    expect((await outbox(d, 'resource_id = ?', id)).map((r) => [r.kind, r.incident_id, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', incident.id, null],
    ]);

    await checkNow(d, id);
    t.set(200);
    await checkNow(d, id);
    expect(await incidents(id)).toEqual([expect.objectContaining({ id: incident.id, resolved_at: expect.any(Number), checks: 4 })]);
    expect((await outbox(d, 'resource_id = ?', id)).map((r) => r.kind)).toEqual(['INCIDENT_OPENED', 'INCIDENT_RESOLVED']);
  });
});
