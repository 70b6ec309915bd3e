import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from './helpers.ts';

// PUSH resources through the monitoring API (docs/API.md#push-checks) against a real daemon:
// create and its refusals (400 naming the field), slugs and their clashes, the admin view,
// PATCH moving the deadline, delete, ping keys, and the uuid (the ping URL's secret) never
// showing in a public view.
const PUBLIC_URL = 'https://monctl.example.test';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let d: TestDaemon;
let admin: Caller;

beforeAll(async () => {
  d = await startDaemon({ args: ['--public-url', PUBLIC_URL], env: { TZ: 'UTC' } });
  admin = { kind: 'key', token: d.adminKey };
});

afterAll(async () => {
  await d?.stop();
});

let named = 0;
const push = (fields: Record<string, unknown> = {}) =>
  call(d, admin, 'POST', '/api/resources', { name: `push-${++named}`, resourceType: 'PUSH', ...fields });
const detail = (id: number) => ok(call(d, admin, 'GET', `/admin/api/resources/${id}`));
const patch = (id: number, body: Record<string, unknown>) => call(d, admin, 'PATCH', `/api/resources/${id}`, body);
/** The fields a 400 names. */
async function refused(res: ReturnType<typeof call>, status = 400): Promise<string[]> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  return r.json().errors.map((e: { field: string }) => e.field);
}
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
      call(d, admin, 'POST', '/api/resources', { name: 'an-http', resourceType: 'HTTP', target: 'http://127.0.0.1:9/' }),
    );
    const list = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    expect(list.find((r: any) => r.id === created.id).push).toEqual(view.push);
    expect(list.find((r: any) => r.id === http.id).push).toBeNull();
  });

  it('makes slugs from names and appends -2, -3… on a clash; a given slug that clashes is a 409 naming target', async () => {
    const slugs = [];
    for (const name of ['Ça va? Backup!', 'ça-va backup', 'ÇA VA  BACKUP', '!!!', '___x___']) slugs.push((await ok(push({ name }))).target);
    expect(slugs).toEqual(['a-va-backup', 'a-va-backup-2', 'a-va-backup-3', 'push', 'x']);
    // `_` is a LIKE wildcard: a slug with one does not make a similar one look taken.
    expect((await ok(push({ name: 'a_b', target: 'a_b' }))).target).toBe('a_b');
    expect((await ok(push({ name: 'A-B' }))).target).toBe('a-b');
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
      expect(await refused(call(d, admin, 'POST', '/api/resources', body)), field).toEqual([field]);
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
    const r = await call(d, admin, 'POST', `/api/resources/${created.id}/check`);
    expect(r.status, r.text).toBe(409);
    expect(r.json().detail).toBe(`A push check is not checked; it waits for pings at ${PUBLIC_URL}/ping/${uuid}`);
    expect(await refused(call(d, admin, 'POST', '/admin/api/resources/test', { resourceType: 'PUSH' }))).toEqual(['resourceType']);
  });
});
