import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from '../monitoring/helpers.ts';
import { checkNow, httpResource, outbox, type Target, target } from './helpers.ts';

/** `YYYY-MM-DDTHH:MM:SS` in UTC: the daemon under test runs with TZ=UTC. */
const wire = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** The local weekday and HH:MM of an instant in a zone (formatting only: the direction that is not under test). */
function localOf(ms: number, timeZone: string): { day: string; time: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return { day: parts.weekday.toUpperCase(), time: `${parts.hour}:${parts.minute}` };
}

/** Maintenance windows through the API: validation, the read shape, and silencing exactly their resources. */
describe('maintenance API', () => {
  let d: TestDaemon;
  let t: Target;
  let admin: Caller;

  beforeAll(async () => {
    [d, t] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), target()]);
    admin = { kind: 'key', token: d.adminKey };
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), t?.close()]);
  });

  const create = (body: Record<string, unknown>) => call(d, admin, 'POST', '/admin/api/maintenance', body);
  const fieldOf = async (res: ReturnType<typeof create>, status = 400) => {
    const r = await res;
    expect(r.status, r.text).toBe(status);
    return r.json().errors?.[0]?.field;
  };

  it('refuses bad windows with 400 naming the field, and a taken name with 409', async () => {
    const id = await httpResource(d, 'validated', t.url);
    const oneOff = { name: 'w', kind: 'ONE_OFF', startsAt: '2030-01-01T00:00:00', endsAt: '2030-01-01T01:00:00', resourceIds: [id] };
    const weekly = {
      name: 'w',
      kind: 'WEEKLY',
      days: ['MON'],
      startTime: '02:00',
      durationMinutes: 90,
      timeZone: 'Europe/Paris',
      resourceIds: [id],
    };
    expect(await fieldOf(create({ ...weekly, timeZone: 'Europe/Nowhere' }))).toBe('timeZone');
    expect(await fieldOf(create({ ...weekly, startTime: '24:00' }))).toBe('startTime');
    expect(await fieldOf(create({ ...weekly, days: ['MON', 'FUNDAY'] }))).toBe('days[1]');
    expect(await fieldOf(create({ ...weekly, durationMinutes: 0 }))).toBe('durationMinutes');
    expect(await fieldOf(create({ ...weekly, timeZone: undefined }))).toBe('timeZone');
    expect(await fieldOf(create({ ...weekly, startsAt: '2030-01-01T00:00:00' }))).toBe('startsAt');
    expect(await fieldOf(create({ ...oneOff, endsAt: undefined }))).toBe('endsAt');
    expect(await fieldOf(create({ ...oneOff, endsAt: '2029-12-31T23:00:00' }))).toBe('endsAt');
    expect(await fieldOf(create({ ...oneOff, startsAt: '2030-02-30T00:00:00' }))).toBe('startsAt');
    expect(await fieldOf(create({ ...oneOff, days: ['MON'] }))).toBe('days');
    expect(await fieldOf(create({ ...oneOff, resourceIds: [] }))).toBe('resourceIds');
    expect(await fieldOf(create({ ...oneOff, resourceIds: [999999] }))).toBe('resourceIds');
    expect(await fieldOf(create({ ...oneOff, groupIds: [999999] }))).toBe('groupIds');
    expect(await fieldOf(create({ ...oneOff, agentIds: [999999] }))).toBe('agentIds');
    expect(await fieldOf(create({ ...oneOff, kind: 'DAILY' }))).toBe('kind');
    const created = await ok(create(oneOff));
    expect(created).toMatchObject({
      name: 'w',
      kind: 'ONE_OFF',
      startsAt: '2030-01-01T00:00:00',
      endsAt: '2030-01-01T01:00:00',
      days: null,
      timeZone: null,
      resourceIds: [id],
      groupIds: [],
      agentIds: [],
      activeNow: false,
      nextStart: '2030-01-01T00:00:00',
      nextEnd: '2030-01-01T01:00:00',
    });
    expect(await fieldOf(create(oneOff), 409)).toBe('name');
    // PUT: a change of kind needs the new kind's fields, and drops the old kind's.
    expect(await fieldOf(call(d, admin, 'PUT', `/admin/api/maintenance/${created.id}`, { kind: 'WEEKLY' }))).toBe('days');
    const changed = await ok(call(d, admin, 'PUT', `/admin/api/maintenance/${created.id}`, { ...weekly, name: undefined }));
    expect(changed).toMatchObject({ name: 'w', kind: 'WEEKLY', startsAt: null, endsAt: null, days: ['MON'], timeZone: 'Europe/Paris' });
    expect(await ok(call(d, admin, 'GET', `/admin/api/maintenance/${created.id}`))).toEqual(changed);
    expect(await ok(call(d, admin, 'DELETE', `/admin/api/maintenance/${created.id}`))).toEqual({ status: 'deleted' });
    expect((await call(d, admin, 'GET', `/admin/api/maintenance/${created.id}`)).status).toBe(404);
    expect((await call(d, admin, 'DELETE', `/admin/api/maintenance/${created.id}`)).status).toBe(404);
  });

  it('a weekly window in Auckland is active exactly from its local start time', async () => {
    const id = await httpResource(d, 'auckland', t.url);
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const started = minute - 30 * 60_000;
    const later = minute + 60 * 60_000;
    const zone = 'Pacific/Auckland';
    const window = (name: string, at: number) => {
      const local = localOf(at, zone);
      return create({
        name,
        kind: 'WEEKLY',
        days: [local.day],
        startTime: local.time,
        durationMinutes: 120,
        timeZone: zone,
        resourceIds: [id],
      });
    };
    const running = await ok(window('running', started));
    expect(running).toMatchObject({ activeNow: true, nextStart: wire(started), nextEnd: wire(started + 120 * 60_000) });
    const upcoming = await ok(window('upcoming', later));
    expect(upcoming).toMatchObject({ activeNow: false, nextStart: wire(later), nextEnd: wire(later + 120 * 60_000) });
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).inMaintenance).toBe(true);
    await ok(call(d, admin, 'DELETE', `/admin/api/maintenance/${running.id}`));
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).inMaintenance).toBe(false);
    await ok(call(d, admin, 'DELETE', `/admin/api/maintenance/${upcoming.id}`));
  });

  it('silences exactly its resources (directly or through a group): incident marked, outbox suppressed; others alert', async () => {
    const group = await d.admin.call(operations.createGroup, { body: { name: 'db-servers', visibility: 'PUBLIC' } });
    const viaGroup = await httpResource(d, 'in-group', t.url, { failureThreshold: 2, groupIds: [group.id] });
    const direct = await httpResource(d, 'direct', t.url, { failureThreshold: 2 });
    const other = await httpResource(d, 'other', t.url, { failureThreshold: 2 });
    const now = Date.now();
    const w = await ok(
      create({
        name: 'tonight',
        kind: 'ONE_OFF',
        startsAt: wire(now - 60_000),
        endsAt: wire(now + 3_600_000),
        groupIds: [group.id],
        resourceIds: [direct],
      }),
    );
    expect(w.activeNow).toBe(true);
    const inMaintenance = async (id: number) => (await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).inMaintenance;
    expect([await inMaintenance(viaGroup), await inMaintenance(direct), await inMaintenance(other)]).toEqual([true, true, false]);
    const listed = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    expect(
      listed
        .filter((r: { inMaintenance: boolean }) => r.inMaintenance)
        .map((r: { id: number }) => r.id)
        .sort(),
    ).toEqual([viaGroup, direct].sort());

    t.set(503);
    for (const id of [viaGroup, direct, other]) {
      await checkNow(d, id);
      const entry = await checkNow(d, id);
      expect(entry.status).toBe('NOT_AVAILABLE'); // checks run and are recorded inside the window
    }
    t.set(200);
    for (const id of [viaGroup, direct, other]) await checkNow(d, id);
    const maintenanceOf = async (id: number) =>
      (await ok(call(d, admin, 'GET', `/admin/api/incidents?resourceId=${id}`))).map((i: { maintenance: boolean }) => i.maintenance);
    expect([await maintenanceOf(viaGroup), await maintenanceOf(direct), await maintenanceOf(other)]).toEqual([[true], [true], [false]]);
    const suppressed = async (id: number) => (await outbox(d, 'resource_id = ?', id)).map((r) => [r.kind, r.suppressed]);
    for (const id of [viaGroup, direct]) {
      expect(await suppressed(id)).toEqual([
        ['INCIDENT_OPENED', 'maintenance'],
        ['INCIDENT_RESOLVED', 'maintenance'],
      ]);
    }
    expect(await suppressed(other)).toEqual([
      ['INCIDENT_OPENED', null],
      ['INCIDENT_RESOLVED', null],
    ]);
    // currentStatus stays as checked inside the window.
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${direct}`))).currentStatus).toBe('available');
    await ok(call(d, admin, 'DELETE', `/admin/api/maintenance/${w.id}`));
  });
});
