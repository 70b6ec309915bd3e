import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok, statusServer, subscribe } from './helpers.ts';

const BATCH = '/admin/api/resources/batch';

/** `POST /admin/api/resources/batch`: creates, updates and deletes in one transaction, all or nothing. */
describe('resource batches', () => {
  let d: TestDaemon;
  let web: Awaited<ReturnType<typeof statusServer>>;
  let admin: Caller;
  let user: Caller;
  let groupId: number;

  beforeAll(async () => {
    [d, web] = await Promise.all([startDaemon(), statusServer()]);
    admin = { kind: 'key', token: d.adminKey };
    user = { kind: 'key', token: (await d.admin.call(operations.createApiKey, { body: { name: 'reader', role: 'USER' } })).token };
    groupId = (await ok(call(d, admin, 'POST', '/admin/api/groups', { name: 'members', visibility: 'AUTHENTICATED' }))).id;
  });
  afterAll(async () => {
    await d?.stop();
    await web?.close();
  });

  const http = (name: string, extra: object = {}) => ({
    name,
    resourceType: 'HTTP',
    target: `${web.url}/${name}`,
    intervalSeconds: 86400,
    ...extra,
  });
  const create = (name: string, extra: object = {}) => ({ op: 'create', resource: http(name, extra) });
  const all = async () =>
    (await ok(call(d, admin, 'GET', '/admin/api/resources'))) as Array<{ id: number; name: string; intervalSeconds: number }>;
  const snapshot = async () => JSON.stringify((await all()).map((r) => [r.id, r.name, r.intervalSeconds]));

  it('creates, updates and deletes in one batch, answering what each item did in order', async () => {
    const seeded = await ok(call(d, admin, 'POST', BATCH, { items: [create('old-a'), create('old-b')] }));
    expect(seeded.items.map((i: { op: string; name: string }) => [i.op, i.name])).toEqual([
      ['create', 'old-a'],
      ['create', 'old-b'],
    ]);
    const [a, b] = seeded.items as Array<{ id: number }>;
    const res = await ok(
      call(d, admin, 'POST', BATCH, {
        items: [
          create('new-1', { groupIds: [groupId] }),
          { op: 'update', id: a.id, patch: { intervalSeconds: 3600, name: 'renamed-a' } },
          { op: 'delete', name: 'old-b' },
          // A name freed earlier in the batch is free for a later item, as with single calls in this order.
          create('old-b', { dependsOn: ['new-1'] }),
          { op: 'update', name: 'new-1', patch: { severity: 'warning' } },
        ],
      }),
    );
    expect(res.items.map((i: { op: string; name: string; changed: boolean }) => [i.op, i.name, i.changed])).toEqual([
      ['create', 'new-1', true],
      ['update', 'renamed-a', true],
      ['delete', 'old-b', true],
      ['create', 'old-b', true],
      ['update', 'new-1', true],
    ]);
    expect(res.items[1].id).toBe(a.id);
    expect(res.items[2].id).toBe(b.id);
    const detail = await ok(call(d, admin, 'GET', `/admin/api/resources/${res.items[0].id}`));
    expect(detail.groups).toEqual([{ id: groupId, name: 'members' }]);
    expect(detail.severity).toBe('warning');
    const later = await ok(call(d, admin, 'GET', `/admin/api/resources/${res.items[3].id}`));
    expect(later.dependsOn).toEqual([{ id: res.items[0].id, name: 'new-1' }]);
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${a.id}`))).intervalSeconds).toBe(3600);
    expect((await call(d, admin, 'GET', `/admin/api/resources/${b.id}`)).status).toBe(404);
    // The visibility cache learnt the new resource's group: anonymous callers do not see it, USER callers do.
    expect((await call(d, { kind: 'anonymous' }, 'GET', `/api/resources/${res.items[0].id}`)).status).toBe(404);
    expect((await call(d, user, 'GET', `/api/resources/${res.items[0].id}`)).status).toBe(200);
  });

  it('refuses the whole batch listing every refused item with its field, and applies nothing', async () => {
    const before = await snapshot();
    const res = await call(d, admin, 'POST', BATCH, {
      items: [
        create('fine-1'),
        create('bad-target', { target: 'not a url' }),
        create('fine-2'),
        create('renamed-a'), // taken in the store
        create('fine-1'), // taken by item 0
        { op: 'update', id: 999999, patch: { intervalSeconds: 60 } },
        { op: 'delete', name: 'nobody' },
        create('bad-interval', { intervalSeconds: 5, groupIds: [987654] }),
        create('unknown-group', { groupIds: [987654] }),
        { op: 'update', name: 'fine-2', patch: { resourceType: 'PUSH' } },
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const problem = res.json() as { detail: string; errors: Array<{ index: number; field: string; status: number; message: string }> };
    const byIndex = problem.errors.map((e) => [e.index, e.field, e.status]);
    expect(byIndex).toEqual([
      [1, '/resource/target', 400],
      [3, '/resource/name', 409],
      [4, '/resource/name', 409],
      [5, '/id', 404],
      [6, '/name', 404],
      [7, '/resource/intervalSeconds', 400],
      [8, '/resource/groupIds', 400],
      [9, '/patch/resourceType', 400],
    ]);
    expect(problem.errors[2].message).toContain('also created by item 0');
    expect(problem.detail).toContain('8 of 10 items refused');
    expect(await snapshot()).toBe(before);
  });

  it('answers 409 when every refused item is a name collision, duplicates inside the batch included', async () => {
    const before = await snapshot();
    const res = await call(d, admin, 'POST', BATCH, { items: [create('twin'), create('twin'), create('x'), create('twin')] });
    expect(res.status, res.text).toBe(409);
    expect(res.json().errors.map((e: { index: number; field: string }) => [e.index, e.field])).toEqual([
      [1, '/resource/name'],
      [3, '/resource/name'],
    ]);
    expect(await snapshot()).toBe(before);
  });

  it('answers 400 for malformed items and bodies, naming the field', async () => {
    const res = await call(d, admin, 'POST', BATCH, {
      items: [
        'nope',
        { op: 'upsert' },
        { op: 'create' },
        { op: 'update', id: 1, name: 'both', patch: {} },
        { op: 'delete', id: -3 },
        { op: 'create', resource: { name: 'x', resourceType: 'HTTP', target: 'http://a', colour: 'red' }, extra: 1 },
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json().errors.map((e: { index: number; field: string }) => [e.index, e.field])).toEqual([
      [0, ''],
      [1, '/op'],
      [2, '/resource'],
      [3, '/name'],
      [4, '/id'],
      [5, '/extra'],
      [5, '/resource/colour'],
    ]);
    const noItems = await call(d, admin, 'POST', BATCH, { resources: [] });
    expect(noItems.status).toBe(400);
    expect(noItems.json().errors[0].field).toBe('items');
  });

  it('answers 413 past 10,000 items, and past the body limit', async () => {
    const items = Array.from({ length: 10_001 }, (_, i) => ({ op: 'delete', id: i + 1 }));
    const res = await call(d, admin, 'POST', BATCH, { items });
    expect(res.status, res.text).toBe(413);
    expect(res.json().detail).toContain('at most 10000 items');
    const huge = await call(d, admin, 'POST', BATCH, `{"items":[${'"x",'.repeat(3_000_000)}"x"]}`);
    expect(huge.status).toBe(413);
  });

  it('is ADMIN only', async () => {
    const body = { items: [create('by-user')] };
    expect((await call(d, { kind: 'anonymous' }, 'POST', BATCH, body)).status).toBe(401);
    expect((await call(d, user, 'POST', BATCH, body)).status).toBe(403);
    expect((await all()).some((r) => r.name === 'by-user')).toBe(false);
  });

  it('has the scheduler check a resource a batch created', async () => {
    const events = subscribe(d, d.adminKey, ['SNAPSHOT', 'CHECK_COMPLETED']);
    try {
      await events.opened;
      const res = await ok(call(d, admin, 'POST', BATCH, { items: [create('checked')] }));
      const id = res.items[0].id as number;
      // Nothing but the scheduler checks it: a new active resource is due at once.
      await vi.waitFor(() => expect(events.events.some((e) => e.kind === 'CHECK_COMPLETED' && e.data.resourceId === id)).toBe(true), {
        timeout: 20_000,
      });
      const history = await ok(call(d, admin, 'GET', `/api/resources/${id}/history`));
      expect(history[0]).toMatchObject({ status: 'AVAILABLE' });
    } finally {
      events.close();
    }
  });
});
