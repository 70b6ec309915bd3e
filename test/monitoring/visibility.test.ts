import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { type Caller, call, ok, statusServer, subscribe } from './helpers.ts';

/**
 * The visibility matrix: resources in PUBLIC, AUTHENTICATED, HIDDEN, mixed and
 * no groups, seen by anonymous, USER and ADMIN callers on list, detail,
 * history and `/api/events`.
 */
type Who = 'anonymous' | 'user' | 'admin';
const CASES: Array<{ name: string; groups: string[]; seenBy: Who[] }> = [
  { name: 'public', groups: ['PUB'], seenBy: ['anonymous', 'user', 'admin'] },
  { name: 'authenticated', groups: ['AUTH'], seenBy: ['user', 'admin'] },
  { name: 'hidden', groups: ['HID'], seenBy: [] },
  { name: 'hidden+authenticated', groups: ['HID', 'AUTH'], seenBy: ['user', 'admin'] },
  { name: 'hidden+public', groups: ['HID', 'PUB'], seenBy: ['anonymous', 'user', 'admin'] },
  { name: 'authenticated+public', groups: ['AUTH', 'PUB'], seenBy: ['anonymous', 'user', 'admin'] },
  { name: 'hidden+hidden', groups: ['HID', 'HID2'], seenBy: [] },
  { name: 'no group', groups: [], seenBy: ['anonymous', 'user', 'admin'] },
];

describe('visibility matrix', () => {
  let d: TestDaemon;
  let web: Awaited<ReturnType<typeof statusServer>>;
  let userKey: string;
  const callers = {} as Record<Who, Caller>;
  const ids = new Map<string, number>();
  const groupIds = new Map<string, number>();

  beforeAll(async () => {
    [d, web] = await Promise.all([startDaemon(), statusServer()]);
    userKey = (await d.admin.call(operations.createApiKey, { body: { name: 'viewer', role: 'USER' } })).token;
    callers.anonymous = { kind: 'anonymous' };
    callers.user = { kind: 'key', token: userKey };
    callers.admin = { kind: 'key', token: d.adminKey };
    for (const [name, visibility] of [
      ['PUB', 'PUBLIC'],
      ['AUTH', 'AUTHENTICATED'],
      ['HID', 'HIDDEN'],
      ['HID2', 'HIDDEN'],
    ] as const) {
      groupIds.set(name, (await d.admin.call(operations.createGroup, { body: { name, visibility } })).id);
    }
    for (const c of CASES) {
      const r = await d.admin.call(operations.createResource, {
        body: { name: c.name, resourceType: 'HTTP', target: `${web.url}/`, groupIds: c.groups.map((g) => groupIds.get(g)!), active: false },
      });
      ids.set(c.name, r.id);
    }
    // Inactive first, so the scheduler (if any) leaves them alone; then on for the list.
    for (const id of ids.values()) await d.admin.call(operations.updateResource, { params: { id }, body: { active: true } });
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), web?.close()]);
  });

  for (const who of ['anonymous', 'user', 'admin'] as const) {
    it(`list and detail for ${who}`, async () => {
      const list = await ok(call(d, callers[who], 'GET', '/api/resources'));
      const names = list.map((r: { name: string }) => r.name).sort();
      expect(names).toEqual(
        CASES.filter((c) => c.seenBy.includes(who))
          .map((c) => c.name)
          .sort(),
      );
      for (const c of CASES) {
        const res = await call(d, callers[who], 'GET', `/api/resources/${ids.get(c.name)}`);
        expect(res.status, `${who} detail of ${c.name}`).toBe(c.seenBy.includes(who) ? 200 : 404);
      }
    });

    it(`history for ${who}`, async () => {
      for (const c of CASES) {
        const res = await call(d, callers[who], 'GET', `/api/resources/${ids.get(c.name)}/history`);
        const expected = who === 'anonymous' ? 401 : who === 'admin' || c.seenBy.includes(who) ? 200 : 404;
        expect(res.status, `${who} history of ${c.name}`).toBe(expected);
      }
    });
  }

  it('inactive resources leave the list but keep their detail', async () => {
    const id = ids.get('public')!;
    await d.admin.call(operations.updateResource, { params: { id }, body: { active: false } });
    try {
      expect((await ok(call(d, callers.anonymous, 'GET', '/api/resources'))).map((r: { id: number }) => r.id)).not.toContain(id);
      expect(await ok(call(d, callers.anonymous, 'GET', `/api/resources/${id}`))).toMatchObject({ currentStatus: 'inactive' });
    } finally {
      await d.admin.call(operations.updateResource, { params: { id }, body: { active: true } });
    }
  });

  it('events: anonymous callers get 401', async () => {
    expect((await call(d, callers.anonymous, 'GET', '/api/events')).status).toBe(401);
  });

  it('events: USER gets the visible resources, ADMIN all; a visibility change applies to live subscribers', async () => {
    const userSub = subscribe(d, userKey);
    const adminSub = subscribe(d, d.adminKey);
    try {
      await Promise.all([userSub.opened, adminSub.opened]);
      const snapshotNames = (s: typeof userSub) => s.events[0].data.resources.map((r: { name: string }) => r.name).sort();
      expect(snapshotNames(userSub)).toEqual(
        CASES.filter((c) => c.seenBy.includes('user'))
          .map((c) => c.name)
          .sort(),
      );
      expect(snapshotNames(adminSub)).toEqual(CASES.map((c) => c.name).sort());

      for (const c of CASES) await d.admin.call(operations.checkResource, { params: { id: ids.get(c.name)! } });
      // Switching every resource off moves each currentStatus to inactive: one STATUS_CHANGED each.
      for (const id of ids.values()) await d.admin.call(operations.updateResource, { params: { id }, body: { active: false } });
      // A last, public check: once a subscriber has it, it has everything published before it.
      const sentinel = (await d.admin.call(operations.checkResource, { params: { id: ids.get('no group')! } })).id;
      const done = (s: typeof userSub) => s.events.some((e) => e.kind === 'CHECK_COMPLETED' && e.data.historyId === sentinel);
      await until(() => done(userSub) && done(adminSub));
      const checked = (s: typeof userSub) =>
        [...new Set(s.events.filter((e) => e.kind === 'CHECK_COMPLETED').map((e) => e.data.resourceId))].sort();
      const visibleIds = CASES.filter((c) => c.seenBy.includes('user'))
        .map((c) => ids.get(c.name)!)
        .sort();
      expect(checked(userSub)).toEqual(visibleIds);
      expect(checked(adminSub)).toEqual([...ids.values()].sort());
      const deactivated = (s: typeof userSub) =>
        s.events
          .filter((e) => e.kind === 'STATUS_CHANGED' && e.data.to === 'inactive')
          .map((e) => e.data.resourceId)
          .sort();
      expect(deactivated(userSub)).toEqual(visibleIds);
      expect(deactivated(adminSub)).toEqual([...ids.values()].sort());
      expect(adminSub.events.find((e) => e.kind === 'STATUS_CHANGED' && e.data.to === 'inactive')!.data).toEqual({
        resourceId: expect.any(Number),
        name: expect.any(String),
        from: 'available',
        to: 'inactive',
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
      });

      // HID becomes PUBLIC: the hidden resource's next check reaches the USER subscriber.
      await d.admin.call(operations.updateGroup, { params: { id: groupIds.get('HID')! }, body: { name: 'HID', visibility: 'PUBLIC' } });
      const entry = await d.admin.call(operations.checkResource, { params: { id: ids.get('hidden')! } });
      await until(() => userSub.events.some((e) => e.kind === 'CHECK_COMPLETED' && e.data.historyId === entry.id));
      await d.admin.call(operations.updateGroup, { params: { id: groupIds.get('HID')! }, body: { name: 'HID', visibility: 'HIDDEN' } });
      for (const id of ids.values()) await d.admin.call(operations.updateResource, { params: { id }, body: { active: true } });
    } finally {
      userSub.close();
      adminSub.close();
    }
  });
});
