import { describe, expect, it } from 'vitest';
import { queryDb } from '../helpers/test-database.ts';
import { call, ok } from './helpers.ts';
import { PUBLIC_URL, refused, usePushWorld } from './push-helpers.ts';

// PUSH resources through the monitoring API (docs/API.md#push-checks) against a real daemon:
// create and its refusals (400 naming the field), slugs and their clashes, the admin view,
// PATCH moving the deadline, and delete. Ping keys and public views: push-keys.test.ts.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const world = usePushWorld();
const { push, detail, patch } = world;
const seconds = (at: string) => Date.parse(`${at}Z`) / 1000;

describe('create', () => {
  it('answers the seed fields, the slug as target; the admin view has the ping URLs and the default schedule', async () => {
    const created = await ok(push({ name: 'Nightly Backup (db1)' }));
    expect(Object.keys(created).sort()).toEqual(['active', 'createdAt', 'id', 'name', 'recursive', 'resourceType', 'skipTLS', 'target']);
    expect(created).toMatchObject({ resourceType: 'PUSH', target: 'nightly-backup-db1', skipTLS: false, recursive: false });
    const view = await detail(created.id);
    expect(view.push.uuid).toMatch(UUID);
    expect(view.push).toEqual({
      uuid: view.push.uuid,
      pingUrl: `${PUBLIC_URL}/ping/${view.push.uuid}`,
      slug: 'nightly-backup-db1',
      slugUrl: null,
      periodSeconds: 86400,
      cron: null,
      timezone: null,
      graceSeconds: 3600,
      lastPingAt: null,
      lastPingKind: null,
      startedAt: null,
      lateAt: expect.any(String),
    });
    // A new check counts from its creation: late one period plus the grace after it.
    expect(seconds(view.push.lateAt) - seconds(view.createdAt)).toBeGreaterThanOrEqual(86400 + 3600 - 1);
    expect(seconds(view.push.lateAt) - seconds(view.createdAt)).toBeLessThanOrEqual(86400 + 3600 + 60);
    expect(view).toMatchObject({ currentStatus: 'unknown', latestCheckStatus: null });
    // The list carries the same view; the other types have none.
    const http = await ok(
      call(world.d, world.admin, 'POST', '/api/resources', { name: 'an-http', resourceType: 'HTTP', target: 'http://127.0.0.1:9/' }),
    );
    const list = await ok(call(world.d, world.admin, 'GET', '/admin/api/resources'));
    expect(list.find((r: any) => r.id === created.id).push).toEqual(view.push);
    expect(list.find((r: any) => r.id === http.id).push).toBeNull();
  });

  it('makes slugs from names and appends -2, -3… on a clash; a given slug that clashes is a 409 naming target', async () => {
    const slugs = [];
    for (const name of ['Ça va? Backup!', 'ça-va backup', 'ÇA VA  BACKUP', '!!!', '___x___']) slugs.push((await ok(push({ name }))).target);
    expect(slugs).toEqual(['a-va-backup', 'a-va-backup-2', 'a-va-backup-3', 'push', 'x']);
    // `_` is kept, and is a LIKE wildcard to the clash lookup: `a_b` and `a-b` are different slugs.
    expect((await ok(push({ name: 'a_b', target: 'a_b' }))).target).toBe('a_b');
    expect((await ok(push({ name: 'A-B' }))).target).toBe('a-b');
    expect((await ok(push({ name: 'A_B!' }))).target).toBe('a_b-2');
    // A name of 100 slug characters: the suffix replaces its end, the slug stays within 100.
    const long = 'x'.repeat(120);
    expect((await ok(push({ name: `${long}1` }))).target).toBe('x'.repeat(100));
    expect((await ok(push({ name: `${long}2` }))).target).toBe(`${'x'.repeat(98)}-2`);
    const given = await ok(push({ target: 'given-slug' }));
    expect(given.target).toBe('given-slug');
    expect(await refused(push({ target: 'given-slug' }), 409)).toEqual(['target']);
    // A clash of names is the name's 409, as for any resource.
    expect(await refused(push({ name: 'A-B' }), 409)).toEqual(['name']);
  });

  it('refuses what a probe reads, a bad slug and a bad schedule: 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ intervalSeconds: 60 }, 'intervalSeconds'],
      [{ locations: ['daemon'] }, 'locations'],
      [{ quorum: 'all' }, 'quorum'],
      [{ skipTLS: true }, 'skipTLS'],
      [{ skipTLS: false }, 'skipTLS'],
      [{ recursive: false }, 'recursive'],
      [{ method: 'POST' }, 'method'],
      [{ headers: { 'x-a': 'b' } }, 'headers'],
      [{ secretHeaders: { 'x-a': 'b' } }, 'secretHeaders'],
      [{ body: 'x' }, 'body'],
      [{ contentType: 'text/plain' }, 'contentType'],
      [{ auth: { type: 'bearer', token: 't' } }, 'auth'],
      [{ followRedirects: false }, 'followRedirects'],
      [{ expectStatus: [200] }, 'expectStatus'],
      [{ timeoutSeconds: 5 }, 'timeoutSeconds'],
      [{ upsideDown: true }, 'upsideDown'],
      [{ target: 'Upper' }, 'target'],
      [{ target: '../etc' }, 'target'],
      [{ target: '-x' }, 'target'],
      [{ target: 'x'.repeat(101) }, 'target'],
      [{ periodSeconds: 60, cron: '0 3 * * *' }, 'cron'],
      [{ cron: 'not a cron' }, 'cron'],
      [{ cron: '0 3 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ timezone: 'Europe/Berlin' }, 'timezone'],
      [{ periodSeconds: 5 }, 'periodSeconds'],
      [{ graceSeconds: -1 }, 'graceSeconds'],
      [{ conditions: ['[STATUS] == 200'] }, 'conditions[0]'],
      [{ conditions: ['[CONNECTED] == true'] }, 'conditions[0]'],
    ];
    for (const [fields, field] of cases) expect(await refused(push(fields)), JSON.stringify(fields)).toEqual([field]);
    // The schedule's fields on the other types.
    for (const field of ['periodSeconds', 'cron', 'timezone', 'graceSeconds']) {
      const value = field === 'cron' ? '0 3 * * *' : field === 'timezone' ? 'UTC' : 60;
      const body = { name: `tcp-${field}`, resourceType: 'TCP', target: '127.0.0.1:9', [field]: value };
      expect(await refused(call(world.d, world.admin, 'POST', '/api/resources', body)), field).toEqual([field]);
    }
    // [RESPONSE_TIME] and [BODY] are what a success ping answers.
    const conditioned = await ok(push({ conditions: ['[RESPONSE_TIME] < 60000', '[BODY] == pat(*ok*)'] }));
    expect((await detail(conditioned.id)).conditions).toEqual(['[RESPONSE_TIME] < 60000', '[BODY] == pat(*ok*)']);
  });

  it('takes a cron expression in a zone (UTC when none is given), or a period and a grace', async () => {
    const berlin = await detail((await ok(push({ cron: '0 3 * * *', timezone: 'Europe/Berlin', graceSeconds: 600 }))).id);
    expect(berlin.push).toMatchObject({ periodSeconds: null, cron: '0 3 * * *', timezone: 'Europe/Berlin', graceSeconds: 600 });
    // 03:00 in Berlin is 01:00 or 02:00 UTC (summer or winter time), plus ten minutes of grace.
    expect(berlin.push.lateAt).toMatch(/T0[12]:10:00$/);
    const utc = await detail((await ok(push({ cron: '30 4 * * *' }))).id);
    expect(utc.push).toMatchObject({ cron: '30 4 * * *', timezone: 'UTC', graceSeconds: 3600 });
    expect(utc.push.lateAt).toMatch(/T05:30:00$/);
    const hourly = await detail((await ok(push({ periodSeconds: 3600, graceSeconds: 0 }))).id);
    expect(seconds(hourly.push.lateAt) - seconds(hourly.createdAt)).toBeGreaterThanOrEqual(3599);
    expect(seconds(hourly.push.lateAt) - seconds(hourly.createdAt)).toBeLessThanOrEqual(3660);
  });

  it('a push check is not checked on demand (409), and the test endpoint refuses PUSH (400 naming resourceType)', async () => {
    const created = await ok(push());
    const { uuid } = (await detail(created.id)).push;
    const r = await call(world.d, world.admin, 'POST', `/api/resources/${created.id}/check`);
    expect(r.status, r.text).toBe(409);
    expect(r.json().detail).toBe(`A push check is not checked; it waits for pings at ${PUBLIC_URL}/ping/${uuid}`);
    expect(await refused(call(world.d, world.admin, 'POST', '/admin/api/resources/test', { resourceType: 'PUSH' }))).toEqual([
      'resourceType',
    ]);
  });
});

describe('patch', () => {
  it('moves the deadline with the schedule: a longer period, a shorter grace, a cron expression, back to the default period', async () => {
    const { id } = await ok(push({ periodSeconds: 3600, graceSeconds: 600 }));
    const first = (await detail(id)).push.lateAt;
    const longer = (await ok(patch(id, { periodSeconds: 7200 }))).push;
    expect(seconds(longer.lateAt) - seconds(first)).toBe(3600);
    const noGrace = (await ok(patch(id, { graceSeconds: 0 }))).push;
    expect(seconds(noGrace.lateAt) - seconds(longer.lateAt)).toBe(-600);
    // A cron expression replaces the period (no need to null it); 03:00 in Berlin is 01:00 or 02:00 UTC.
    const cron = (await ok(patch(id, { cron: '0 3 * * *', timezone: 'Europe/Berlin' }))).push;
    expect(cron).toMatchObject({ periodSeconds: null, cron: '0 3 * * *', timezone: 'Europe/Berlin', graceSeconds: 0 });
    expect(cron.lateAt).toMatch(/T0[12]:00:00$/);
    // A period replaces the cron expression and its zone.
    const period = (await ok(patch(id, { periodSeconds: 600 }))).push;
    expect(period).toMatchObject({ periodSeconds: 600, cron: null, timezone: null });
    expect(seconds(period.lateAt) - seconds(first)).toBe(600 - 3600 - 600);
    await ok(patch(id, { cron: '*/5 * * * *', periodSeconds: null }));
    // Neither left: the default period of one day.
    const reset = (await ok(patch(id, { cron: null }))).push;
    expect(reset).toMatchObject({ periodSeconds: 86400, cron: null, timezone: null });
    expect(seconds(reset.lateAt) - seconds(first)).toBe(86400 - 3600 - 600);
    // The same schedule again changes nothing (apply sends everything on every run).
    expect((await ok(patch(id, { periodSeconds: 86400, graceSeconds: 0 }))).push).toEqual(reset);
  });

  it('counts from a pending start or the last finished ping; a check judged late stays late until a ping', async () => {
    const { id } = await ok(push({ periodSeconds: 3600, graceSeconds: 600 }));
    // What the ping endpoints and the deadline judge write (daemon/push/): a finished run, a started one, a judged deadline.
    const finished = Date.parse('2031-01-01T00:00:00Z');
    await queryDb(world.d, 'UPDATE push_checks SET last_ping_at = ?, last_ping_kind = ? WHERE resource_id = ?', finished, 'success', id);
    expect((await ok(patch(id, { periodSeconds: 1800 }))).push.lateAt).toBe('2031-01-01T00:40:00');
    await queryDb(world.d, 'UPDATE push_checks SET started_at = ? WHERE resource_id = ?', finished + 3_600_000, id);
    expect((await ok(patch(id, { graceSeconds: 120 }))).push.lateAt).toBe('2031-01-01T01:02:00');
    await queryDb(world.d, 'UPDATE push_checks SET late_at = NULL, started_at = NULL WHERE resource_id = ?', id);
    const judged = (await ok(patch(id, { periodSeconds: 60, graceSeconds: 0 }))).push;
    expect(judged).toMatchObject({ periodSeconds: 60, graceSeconds: 0, lateAt: null });
  });

  it('renames the slug (409 naming target on a clash) without touching the status', async () => {
    const { id } = await ok(push({ target: 'to-rename' }));
    await ok(push({ target: 'taken-slug' }));
    const renamed = await ok(patch(id, { target: 'renamed' }));
    expect([renamed.target, renamed.push.slug, renamed.currentStatus]).toEqual(['renamed', 'renamed', 'unknown']);
    expect(await refused(patch(id, { target: 'taken-slug' }), 409)).toEqual(['target']);
    expect(await refused(patch(id, { target: 'Not A Slug' }))).toEqual(['target']);
    // The old slug is free again.
    expect((await ok(push({ target: 'to-rename' }))).target).toBe('to-rename');
  });

  it('refuses a change of type to or from PUSH, and the fields the type does not take (400 naming the field)', async () => {
    const { id } = await ok(push());
    const http = await ok(
      call(world.d, world.admin, 'POST', '/api/resources', { name: 'patch-http', resourceType: 'HTTP', target: 'http://127.0.0.1:9/' }),
    );
    expect(await refused(patch(id, { resourceType: 'HTTP', target: 'http://127.0.0.1:9/' }))).toEqual(['resourceType']);
    expect(await refused(patch(http.id, { resourceType: 'PUSH' }))).toEqual(['resourceType']);
    for (const field of ['intervalSeconds', 'quorum', 'skipTLS', 'recursive', 'locations', 'timeoutSeconds', 'method']) {
      const value = {
        intervalSeconds: 30,
        quorum: 'all',
        skipTLS: true,
        recursive: false,
        locations: [],
        timeoutSeconds: 5,
        method: 'GET',
      }[field];
      expect(await refused(patch(id, { [field]: value })), field).toEqual([field]);
    }
    expect(await refused(patch(id, { cron: '0 3 * * *', periodSeconds: 60 }))).toEqual(['cron']);
    expect(await refused(patch(id, { cron: '61 * * * *' }))).toEqual(['cron']);
    expect(await refused(patch(id, { timezone: 'Europe/Berlin' }))).toEqual(['timezone']);
    expect(await refused(patch(id, { conditions: ['[STATUS] == 200'] }))).toEqual(['conditions[0]']);
    expect(await refused(patch(http.id, { graceSeconds: 60 }))).toEqual(['graceSeconds']);
    expect(await refused(patch(http.id, { cron: null }))).toEqual(['cron']);
    // Name, groups, thresholds, conditions and active go as for any resource.
    const edited = await ok(patch(id, { name: 'renamed push', failureThreshold: 1, conditions: ['[BODY] == pat(*done*)'], active: false }));
    expect(edited).toMatchObject({
      name: 'renamed push',
      failureThreshold: 1,
      conditions: ['[BODY] == pat(*done*)'],
      currentStatus: 'inactive',
    });
  });
});

describe('delete', () => {
  it('removes the push check with its resource: the slug is free again', async () => {
    const { id } = await ok(push({ target: 'deleted-slug' }));
    expect(await ok(call(world.d, world.admin, 'DELETE', `/api/resources/${id}`))).toEqual({ status: 'deleted' });
    expect(await queryDb(world.d, 'SELECT resource_id FROM push_checks WHERE resource_id = ?', id)).toEqual([]);
    expect((await ok(push({ target: 'deleted-slug' }))).target).toBe('deleted-slug');
  });
});
