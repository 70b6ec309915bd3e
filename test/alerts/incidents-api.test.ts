import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from '../monitoring/helpers.ts';
import { checkNow, httpResource, outbox, subscribe, type Target, target, until } from './helpers.ts';

/** The incidents API, thresholds on resources, the admin detail and INCIDENT_* on /api/events. */
describe('incidents API', () => {
  let d: TestDaemon;
  let t: Target;
  let admin: Caller;
  let userToken: string;

  beforeAll(async () => {
    [d, t] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), target()]);
    admin = { kind: 'key', token: d.adminKey };
    userToken = (await d.admin.call(operations.createApiKey, { body: { name: 'user', role: 'USER' } })).token;
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), t?.close()]);
  });

  it('validates thresholds on create and update (400 naming the field), defaults 3 and 1', async () => {
    const base = { name: 'thresholds', resourceType: 'HTTP', target: t.url };
    for (const [field, value] of [
      ['failureThreshold', 0],
      ['failureThreshold', 101],
      ['successThreshold', 0],
      ['successThreshold', 1.5],
      ['failureThreshold', '3'],
    ] as const) {
      const res = await call(d, admin, 'POST', '/api/resources', { ...base, [field]: value });
      expect(res.status, `${field}=${value}`).toBe(400);
      expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const id = await httpResource(d, 'thresholds', t.url);
    expect(await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).toMatchObject({
      failureThreshold: 3,
      successThreshold: 1,
      inMaintenance: false,
      certExpiresAt: null,
      incidents: [],
    });
    const bad = await call(d, admin, 'PATCH', `/api/resources/${id}`, { successThreshold: 101 });
    expect(bad.status).toBe(400);
    expect(bad.json().errors[0].field).toBe('successThreshold');
    expect(await ok(call(d, admin, 'PATCH', `/api/resources/${id}`, { failureThreshold: 100, successThreshold: 2 }))).toMatchObject({
      failureThreshold: 100,
      successThreshold: 2,
    });
  });

  it('lists and gets incidents, filtered and paged like history; the admin detail shows them, open first', async () => {
    const id = await httpResource(d, 'paged', t.url, { failureThreshold: 1 });
    for (let i = 0; i < 3; i++) {
      t.set(500 + i);
      await checkNow(d, id);
      t.set(200);
      await checkNow(d, id);
    }
    t.set(503);
    const last = await checkNow(d, id);
    // currentStatus is the latest check, as before; the incident is the debounced view.
    const detail = await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`));
    expect(detail.currentStatus).toBe('not_available');
    expect(detail.incidents.map((i: { resolvedAt: string | null }) => i.resolvedAt === null)).toEqual([true, false, false, false]);
    expect(detail.incidents[0]).toMatchObject({
      resourceId: id,
      agentId: null,
      openedAt: last.checkedAt,
      cause: { message: '503 Service Unavailable', errorCode: '503' },
      checks: 1,
      maintenance: false,
    });

    const all = await ok(call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}`));
    expect(all).toHaveLength(4);
    expect(all.map((i: { id: number }) => i.id)).toEqual([...all.map((i: { id: number }) => i.id)].sort((a, b) => b - a));
    expect(all[3]).toMatchObject({ cause: { errorCode: '500' }, durationSeconds: expect.any(Number), resolvedAt: expect.any(String) });
    const open = await ok(call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}&state=open`));
    expect(open.map((i: { id: number }) => i.id)).toEqual([all[0].id]);
    expect(await ok(call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}&state=resolved`))).toHaveLength(3);

    const page = await call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}&state=resolved&limit=2`);
    expect(page.json()).toHaveLength(2);
    const link = String(page.headers.link);
    expect(link).toBe(`</admin/api/incidents?limit=2&before=${all[2].id}&resourceId=${id}&state=resolved>; rel="next"`);
    const next = await ok(call(d, admin, 'GET', /<([^>]+)>/.exec(link)![1]));
    expect(next.map((i: { id: number }) => i.id)).toEqual([all[3].id]);

    expect(await ok(call(d, admin, 'GET', `/admin/api/incidents/${all[3].id}`))).toEqual(all[3]);
    expect((await call(d, admin, 'GET', '/admin/api/incidents/999999')).status).toBe(404);
    expect((await call(d, admin, 'GET', '/admin/api/incidents?state=closed')).status).toBe(400);
    expect((await call(d, { kind: 'key', token: userToken }, 'GET', '/admin/api/incidents')).status).toBe(403);
    t.set(200);
  });

  it('publishes INCIDENT_OPENED and INCIDENT_RESOLVED on /api/events with the visibility of STATUS_CHANGED', async () => {
    const hidden = await d.admin.call(operations.createGroup, { body: { name: 'secret', visibility: 'HIDDEN' } });
    const seen = await httpResource(d, 'seen', t.url, { failureThreshold: 1 });
    const unseen = await httpResource(d, 'unseen', t.url, { failureThreshold: 1, groupIds: [hidden.id] });
    const asAdmin = subscribe(d, d.adminKey);
    const asUser = subscribe(d, userToken);
    try {
      await Promise.all([asAdmin.opened, asUser.opened]);
      t.set(500);
      await checkNow(d, unseen);
      await checkNow(d, seen);
      t.set(200);
      await checkNow(d, unseen);
      await checkNow(d, seen);
      const incidentEvents = (s: typeof asAdmin) =>
        s.events.filter((e) => e.kind.startsWith('INCIDENT_')).map((e) => [e.kind, e.data.resourceId]);
      await until(() => incidentEvents(asAdmin).length === 4 && incidentEvents(asUser).length === 2);
      expect(incidentEvents(asAdmin)).toEqual([
        ['INCIDENT_OPENED', unseen],
        ['INCIDENT_OPENED', seen],
        ['INCIDENT_RESOLVED', unseen],
        ['INCIDENT_RESOLVED', seen],
      ]);
      // STATUS_CHANGED of the same resource came after its last INCIDENT_ event: the user's stream is complete.
      await until(() => asUser.events.filter((e) => e.kind === 'STATUS_CHANGED' && e.data.resourceId === seen).length >= 2);
      expect(incidentEvents(asUser)).toEqual([
        ['INCIDENT_OPENED', seen],
        ['INCIDENT_RESOLVED', seen],
      ]);
      const opened = asAdmin.events.find((e) => e.kind === 'INCIDENT_OPENED' && e.data.resourceId === seen)!.data;
      expect(opened).toEqual(
        await ok(call(d, admin, 'GET', `/admin/api/incidents/${opened.id}`)).then((i) => ({
          ...i,
          resolvedAt: null,
          durationSeconds: opened.durationSeconds,
        })),
      );
    } finally {
      asAdmin.close();
      asUser.close();
    }
  });

  it('deleting a resource resolves its open incident, suppressed', async () => {
    const id = await httpResource(d, 'deleted-while-down', t.url, { failureThreshold: 1 });
    t.set(500);
    await checkNow(d, id);
    t.set(200);
    await d.admin.call(operations.deleteResource, { params: { id } });
    expect((await outbox(d, 'resource_id = ?', id)).map((r) => [r.kind, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', null],
      ['INCIDENT_RESOLVED', 'deleted'],
    ]);
    const [incident] = await ok(call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}`));
    expect(incident.resolvedAt).not.toBeNull();
  });

  it('counts open incidents in monctl_incidents_open', async () => {
    const id = await httpResource(d, 'gauge', t.url, { failureThreshold: 1 });
    t.set(500);
    await checkNow(d, id);
    t.set(200);
    const open = (await ok(call(d, admin, 'GET', '/admin/api/incidents?state=open'))).filter(
      (i: { resourceId: number | null }) => i.resourceId !== null,
    );
    const metrics = await fetch(`${d.url}/actuator/prometheus`).then((r) => r.text());
    expect(metrics).toContain(`monctl_incidents_open{subject="resource"} ${open.length}`);
    expect(metrics).toContain('monctl_incidents_open{subject="agent"} 0');
    await checkNow(d, id);
  });
});
