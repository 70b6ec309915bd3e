import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, DATE_TIME, ok } from './helpers.ts';

/**
 * Walkthrough finding (issue 13): the public list carried no status, so
 * `monctl status` showed `-` to USER and anonymous callers. The list now has
 * `currentStatus`, `latestCheckStatus` and `latestCheckedAt`, fresh after
 * every check even though the list is cached.
 */
describe('the public resource list carries the status', () => {
  let d: TestDaemon;
  let web: Server;
  let webUrl: string;
  /** What the target answers; flipped by the test without touching the resource. */
  let code = 200;
  let admin: Caller;
  let user: Caller;
  const anon: Caller = { kind: 'anonymous' };

  beforeAll(async () => {
    web = createServer((_req, res) => res.writeHead(code, { connection: 'close' }).end());
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    d = await startDaemon();
    admin = { kind: 'key', token: d.adminKey };
    user = { kind: 'key', token: (await d.admin.call(operations.createApiKey, { body: { name: 'reader', role: 'USER' } })).token };
  });
  afterAll(async () => {
    await d?.stop();
    web?.closeAllConnections();
    await new Promise((r) => web?.close(r));
  });

  const itemOf = async (caller: Caller, id: number) =>
    (await ok(call(d, caller, 'GET', '/api/resources'))).find((r: { id: number }) => r.id === id);

  it('shows currentStatus, latestCheckStatus and latestCheckedAt to anonymous and USER callers, as the detail does', async () => {
    const members = await ok(call(d, admin, 'POST', '/admin/api/groups', { name: 'members', visibility: 'AUTHENTICATED' }));
    const open = await ok(
      call(d, admin, 'POST', '/api/resources', { name: 'open', resourceType: 'HTTP', target: `${webUrl}/a`, intervalSeconds: 86400 }),
    );
    const closed = await ok(
      call(d, admin, 'POST', '/api/resources', {
        name: 'members-only',
        resourceType: 'HTTP',
        target: `${webUrl}/b`,
        intervalSeconds: 86400,
        groupIds: [members.id],
      }),
    );
    // The created resource stays exactly the seed's object.
    expect(open).not.toHaveProperty('currentStatus');
    await ok(call(d, admin, 'POST', `/api/resources/${open.id}/check`));
    await ok(call(d, admin, 'POST', `/api/resources/${closed.id}/check`));

    for (const [caller, id] of [
      [anon, open.id],
      [user, open.id],
      [user, closed.id],
    ] as const) {
      const item = await itemOf(caller, id);
      expect(Object.keys(item).sort()).toEqual([
        'active',
        'createdAt',
        'currentStatus',
        'id',
        'latestCheckStatus',
        'latestCheckedAt',
        'name',
        'recursive',
        'resourceType',
        'skipTLS',
        'target',
      ]);
      expect(item).toMatchObject({
        currentStatus: 'available',
        latestCheckStatus: 'AVAILABLE',
        latestCheckedAt: expect.stringMatching(DATE_TIME),
      });
      const detail = await ok(call(d, caller, 'GET', `/api/resources/${id}`));
      expect(item).toEqual({
        id: detail.id,
        name: detail.name,
        resourceType: detail.resourceType,
        target: detail.target,
        skipTLS: detail.skipTLS,
        recursive: detail.recursive,
        active: detail.active,
        createdAt: detail.createdAt,
        currentStatus: detail.currentStatus,
        latestCheckStatus: detail.latestCheckStatus,
        latestCheckedAt: detail.latestCheckedAt,
      });
    }
    expect(await itemOf(anon, closed.id)).toBeUndefined();
  });

  it('is fresh after a check even while the list is cached', async () => {
    code = 200;
    const r = await ok(
      call(d, admin, 'POST', '/api/resources', { name: 'flips', resourceType: 'HTTP', target: `${webUrl}/c`, intervalSeconds: 86400 }),
    );
    await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`));
    // Read twice per audience: the second read is served from the cache.
    for (const caller of [anon, user, anon, user]) expect(await itemOf(caller, r.id)).toMatchObject({ currentStatus: 'available' });
    code = 503;
    const entry = await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`));
    expect(entry.status).toBe('NOT_AVAILABLE');
    for (const caller of [anon, user]) {
      expect(await itemOf(caller, r.id)).toMatchObject({
        currentStatus: 'not_available',
        latestCheckStatus: 'NOT_AVAILABLE',
        latestCheckedAt: entry.checkedAt,
      });
    }
  });
});
