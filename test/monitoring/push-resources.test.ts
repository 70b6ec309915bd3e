import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { queryDb } from '../helpers/test-database.ts';
import { type Caller, call, headersFor, ok } from './helpers.ts';

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
    await queryDb(d, 'UPDATE push_checks SET last_ping_at = ?, last_ping_kind = ? WHERE resource_id = ?', finished, 'success', id);
    expect((await ok(patch(id, { periodSeconds: 1800 }))).push.lateAt).toBe('2031-01-01T00:40:00');
    await queryDb(d, 'UPDATE push_checks SET started_at = ? WHERE resource_id = ?', finished + 3_600_000, id);
    expect((await ok(patch(id, { graceSeconds: 120 }))).push.lateAt).toBe('2031-01-01T01:02:00');
    await queryDb(d, 'UPDATE push_checks SET late_at = NULL, started_at = NULL WHERE resource_id = ?', id);
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
      call(d, admin, 'POST', '/api/resources', { name: 'patch-http', resourceType: 'HTTP', target: 'http://127.0.0.1:9/' }),
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
    expect(await ok(call(d, admin, 'DELETE', `/api/resources/${id}`))).toEqual({ status: 'deleted' });
    expect(await queryDb(d, 'SELECT resource_id FROM push_checks WHERE resource_id = ?', id)).toEqual([]);
    expect((await ok(push({ target: 'deleted-slug' }))).target).toBe('deleted-slug');
  });
});

describe('ping keys', () => {
  const keys = () => ok(call(d, admin, 'GET', '/admin/api/ping-keys'));
  const createKey = (body: Record<string, unknown>) => call(d, admin, 'POST', '/admin/api/ping-keys', body);
  const group = async (name: string) =>
    (await ok(call(d, admin, 'POST', '/admin/api/groups', { name, visibility: 'PUBLIC' }))).id as number;

  it("create, replace, list and delete; a resource's slug URL takes its first group's key, else the daemon's", async () => {
    expect(await keys()).toEqual([]);
    const [first, second, keyless] = [await group('keys-1'), await group('keys-2'), await group('keys-3')];
    const inSecond = await ok(push({ target: 'in-second', groupIds: [second, keyless] }));
    const inKeyless = await ok(push({ target: 'in-keyless', groupIds: [keyless] }));
    expect((await detail(inSecond.id)).push.slugUrl).toBeNull();

    const daemonKey = await ok(createKey({}), 201);
    expect(daemonKey).toEqual({
      id: expect.any(Number),
      key: expect.any(String),
      groupId: null,
      groupName: null,
      allowCreate: false,
      createdAt: expect.any(String),
    });
    expect(daemonKey.key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const secondKey = await ok(createKey({ groupId: second, allowCreate: true }), 201);
    expect(secondKey).toMatchObject({ groupId: second, groupName: 'keys-2', allowCreate: true });
    expect((await detail(inSecond.id)).push.slugUrl).toBe(`${PUBLIC_URL}/ping/${secondKey.key}/in-second`);
    expect((await detail(inKeyless.id)).push.slugUrl).toBe(`${PUBLIC_URL}/ping/${daemonKey.key}/in-keyless`);
    // The first group by id with a key wins.
    const firstKey = await ok(createKey({ groupId: first }), 201);
    await ok(patch(inSecond.id, { groupIds: [keyless, second, first] }));
    const list = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    expect(list.find((r: any) => r.id === inSecond.id).push.slugUrl).toBe(`${PUBLIC_URL}/ping/${firstKey.key}/in-second`);

    // Creating a scope's key again replaces it: same id, a new key.
    const replaced = await ok(createKey({ allowCreate: true }), 201);
    expect(replaced).toMatchObject({ id: daemonKey.id, groupId: null, allowCreate: true });
    expect(replaced.key).not.toBe(daemonKey.key);
    expect((await keys()).map((k: any) => [k.id, k.groupId])).toEqual([
      [daemonKey.id, null],
      [firstKey.id, first],
      [secondKey.id, second],
    ]);

    expect(await ok(call(d, admin, 'DELETE', `/admin/api/ping-keys/${firstKey.id}`))).toEqual({ status: 'deleted' });
    expect((await call(d, admin, 'DELETE', `/admin/api/ping-keys/${firstKey.id}`)).status).toBe(404);
    expect((await detail(inSecond.id)).push.slugUrl).toBe(`${PUBLIC_URL}/ping/${secondKey.key}/in-second`);
    // A group's key goes with the group.
    await ok(call(d, admin, 'DELETE', `/api/resources/${inSecond.id}`));
    await ok(call(d, admin, 'DELETE', `/admin/api/groups/${second}`));
    expect((await keys()).map((k: any) => k.id)).toEqual([daemonKey.id]);
  });

  it('refuses an unknown group (400 naming groupId), unknown fields, and callers that are not ADMIN', async () => {
    expect(await refused(createKey({ groupId: 987654 }))).toEqual(['groupId']);
    expect(await refused(createKey({ groupId: 'x' }))).toEqual(['groupId']);
    expect((await refused(createKey({ scope: 'daemon' }))).length).toBe(1);
    const userKey = await ok(call(d, admin, 'POST', '/admin/api/api-keys', { name: 'ping-keys-user', role: 'USER' }));
    const user: Caller = { kind: 'key', token: userKey.token };
    expect((await call(d, user, 'GET', '/admin/api/ping-keys')).status).toBe(403);
    expect((await call(d, user, 'POST', '/admin/api/ping-keys', {})).status).toBe(403);
    expect((await call(d, { kind: 'anonymous' }, 'GET', '/admin/api/ping-keys')).status).toBe(401);
  });
});

describe('public views', () => {
  /** The first SSE frame of `/api/events` (the SNAPSHOT) as `caller`. */
  async function snapshot(caller: Caller): Promise<string> {
    const controller = new AbortController();
    const res = await fetch(`${d.url}/api/events`, { headers: headersFor(caller), signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    return text;
  }

  it('show the slug as target and never the uuid: lists, details, events, status pages and badges', async () => {
    const groupId = (await ok(call(d, admin, 'POST', '/admin/api/groups', { name: 'public-push', visibility: 'PUBLIC' }))).id;
    const { id } = await ok(push({ name: 'Public backup', groupIds: [groupId] }));
    const { uuid } = (await detail(id)).push;
    await ok(call(d, admin, 'POST', '/admin/api/status-pages', { slug: 'push-page', title: 'Jobs', groupIds: [groupId] }));
    const userKey = await ok(call(d, admin, 'POST', '/admin/api/api-keys', { name: 'public-views-user', role: 'USER' }));
    const anonymous: Caller = { kind: 'anonymous' };
    const user: Caller = { kind: 'key', token: userKey.token };

    const list = await call(d, anonymous, 'GET', '/api/resources');
    expect(list.json().find((r: any) => r.id === id)).toMatchObject({
      resourceType: 'PUSH',
      target: 'public-backup',
      currentStatus: 'unknown',
    });
    const one = await call(d, anonymous, 'GET', `/api/resources/${id}`);
    expect(one.json()).toMatchObject({ resourceType: 'PUSH', target: 'public-backup', groupName: 'public-push' });
    expect(one.json()).not.toHaveProperty('push');
    const summary = await call(d, anonymous, 'GET', '/api/status-pages/push-page/summary');
    expect(summary.status, summary.text).toBe(200);
    expect(summary.json().groups[0].resources).toEqual([
      expect.objectContaining({ id, name: 'Public backup', resourceType: 'PUSH', currentStatus: 'unknown' }),
    ]);
    const page = await call(d, anonymous, 'GET', '/status/push-page');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Public backup');
    const badges = await Promise.all(
      ['status', 'uptime', 'response'].map((kind) => call(d, anonymous, 'GET', `/api/badges/${id}/${kind}.svg`)),
    );
    expect(badges.map((b) => b.status)).toEqual([200, 200, 200]);
    expect(badges[0].text).toContain('status: unknown');
    const reads = [list, one, summary, page, ...badges].map((r) => r.text);
    reads.push(await snapshot(user), (await call(d, user, 'GET', `/api/resources/${id}/history`)).text);
    expect(reads.join('\n')).toContain('public-backup');
    for (const text of reads) expect(text).not.toContain(uuid);
  });
});
