import { describe, expect, it } from 'vitest';
import { until } from '../helpers/http.ts';
import { ping } from '../push/helpers.ts';
import { type Caller, call, headersFor, ok, subscribe } from './helpers.ts';
import { PUBLIC_URL, refused, usePushWorld } from './push-helpers.ts';

// Ping keys (/admin/api/ping-keys) and what public views show of a PUSH resource: its slug,
// never the uuid of its ping URL; with real pings, status pages and badges as for any resource
// (docs/API.md#push-checks).
const world = usePushWorld();
const { push, detail, patch } = world;

describe('ping keys', () => {
  const keys = () => ok(call(world.d, world.admin, 'GET', '/admin/api/ping-keys'));
  const createKey = (body: Record<string, unknown>) => call(world.d, world.admin, 'POST', '/admin/api/ping-keys', body);
  const group = async (name: string) =>
    (await ok(call(world.d, world.admin, 'POST', '/admin/api/groups', { name, visibility: 'PUBLIC' }))).id as number;

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
    const list = await ok(call(world.d, world.admin, 'GET', '/admin/api/resources'));
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

    expect(await ok(call(world.d, world.admin, 'DELETE', `/admin/api/ping-keys/${firstKey.id}`))).toEqual({ status: 'deleted' });
    expect((await call(world.d, world.admin, 'DELETE', `/admin/api/ping-keys/${firstKey.id}`)).status).toBe(404);
    expect((await detail(inSecond.id)).push.slugUrl).toBe(`${PUBLIC_URL}/ping/${secondKey.key}/in-second`);
    // A group's key goes with the group.
    await ok(call(world.d, world.admin, 'DELETE', `/api/resources/${inSecond.id}`));
    await ok(call(world.d, world.admin, 'DELETE', `/admin/api/groups/${second}`));
    expect((await keys()).map((k: any) => k.id)).toEqual([daemonKey.id]);
  });

  it('refuses an unknown group (400 naming groupId), unknown fields, and callers that are not ADMIN', async () => {
    expect(await refused(createKey({ groupId: 987654 }))).toEqual(['groupId']);
    expect(await refused(createKey({ groupId: 'x' }))).toEqual(['groupId']);
    expect((await refused(createKey({ scope: 'daemon' }))).length).toBe(1);
    const userKey = await ok(call(world.d, world.admin, 'POST', '/admin/api/api-keys', { name: 'ping-keys-user', role: 'USER' }));
    const user: Caller = { kind: 'key', token: userKey.token };
    expect((await call(world.d, user, 'GET', '/admin/api/ping-keys')).status).toBe(403);
    expect((await call(world.d, user, 'POST', '/admin/api/ping-keys', {})).status).toBe(403);
    expect((await call(world.d, { kind: 'anonymous' }, 'GET', '/admin/api/ping-keys')).status).toBe(401);
  });
});

describe('public views', () => {
  /** The first SSE frame of `/api/events` (the SNAPSHOT) as `caller`. */
  async function snapshot(caller: Caller): Promise<string> {
    const controller = new AbortController();
    const res = await fetch(`${world.d.url}/api/events`, { headers: headersFor(caller), signal: controller.signal });
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
    const groupId = (await ok(call(world.d, world.admin, 'POST', '/admin/api/groups', { name: 'public-push', visibility: 'PUBLIC' }))).id;
    const { id } = await ok(push({ name: 'Public backup', groupIds: [groupId] }));
    const { uuid } = (await detail(id)).push;
    await ok(call(world.d, world.admin, 'POST', '/admin/api/status-pages', { slug: 'push-page', title: 'Jobs', groupIds: [groupId] }));
    const userKey = await ok(call(world.d, world.admin, 'POST', '/admin/api/api-keys', { name: 'public-views-user', role: 'USER' }));
    const anonymous: Caller = { kind: 'anonymous' };
    const user: Caller = { kind: 'key', token: userKey.token };

    const list = await call(world.d, anonymous, 'GET', '/api/resources');
    expect(list.json().find((r: any) => r.id === id)).toMatchObject({
      resourceType: 'PUSH',
      target: 'public-backup',
      currentStatus: 'unknown',
    });
    const one = await call(world.d, anonymous, 'GET', `/api/resources/${id}`);
    expect(one.json()).toMatchObject({ resourceType: 'PUSH', target: 'public-backup', groupName: 'public-push' });
    expect(one.json()).not.toHaveProperty('push');
    const summary = await call(world.d, anonymous, 'GET', '/api/status-pages/push-page/summary');
    expect(summary.status, summary.text).toBe(200);
    expect(summary.json().groups[0].resources).toEqual([
      expect.objectContaining({ id, name: 'Public backup', resourceType: 'PUSH', currentStatus: 'unknown' }),
    ]);
    const page = await call(world.d, anonymous, 'GET', '/status/push-page');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Public backup');
    const badges = await Promise.all(
      ['status', 'uptime', 'response'].map((kind) => call(world.d, anonymous, 'GET', `/api/badges/${id}/${kind}.svg`)),
    );
    expect(badges.map((b) => b.status)).toEqual([200, 200, 200]);
    expect(badges[0].text).toContain('status: unknown');
    const reads = [list, one, summary, page, ...badges].map((r) => r.text);
    reads.push(await snapshot(user), (await call(world.d, user, 'GET', `/api/resources/${id}/history`)).text);
    expect(reads.join('\n')).toContain('public-backup');
    for (const text of reads) expect(text).not.toContain(uuid);
  });
});

describe('with pings', () => {
  it('a status page and badges show a push check as any resource: up after a success, down after a failed run, never its output', async () => {
    const groupId = (await ok(call(world.d, world.admin, 'POST', '/admin/api/groups', { name: 'nightly', visibility: 'PUBLIC' }))).id;
    const { id } = await ok(push({ name: 'Nightly dump', groupIds: [groupId], failureThreshold: 1 }));
    const { uuid } = (await detail(id)).push;
    await ok(call(world.d, world.admin, 'POST', '/admin/api/status-pages', { slug: 'nightly', title: 'Nightly', groupIds: [groupId] }));
    const anonymous: Caller = { kind: 'anonymous' };
    const summary = async () => (await ok(call(world.d, anonymous, 'GET', '/api/status-pages/nightly/summary'))) as any;
    const badge = async () => (await call(world.d, anonymous, 'GET', `/api/badges/${id}/status.svg`)).text;

    expect((await ping(world.d.url, `/ping/${uuid}`)).status).toBe(200);
    await until(async () => (await summary()).groups[0].resources[0].currentStatus === 'available');
    expect(await badge()).toContain('status: up');
    expect((await summary()).overall).toMatchObject({ state: 'OPERATIONAL' });

    const output = 'pg_dump: connection to 10.0.0.5:5432 timed out';
    expect((await ping(world.d.url, `/ping/${uuid}/fail`, { method: 'POST', body: output })).status).toBe(200);
    await until(async () => (await summary()).groups[0].resources[0].down === true);
    expect(await badge()).toContain('status: down');
    const page = await summary();
    expect(page.overall).toMatchObject({ state: 'MAJOR_OUTAGE' });
    expect(page.incidents.map((i: any) => [i.resourceName, i.errorCode, i.cause])).toEqual([
      ['Nightly dump', 'FAILED_RUN', 'the run failed'],
    ]);
    const html = (await call(world.d, anonymous, 'GET', '/status/nightly')).text;
    for (const text of [JSON.stringify(page), html, await badge()]) {
      expect(text).not.toContain('10.0.0.5');
      expect(text).not.toContain(uuid);
    }
  });

  it("a resource a ping's ?create=1 made reaches the event stream of those who may see it", async () => {
    const groupId = (
      await ok(call(world.d, world.admin, 'POST', '/admin/api/groups', { name: 'made-by-ping', visibility: 'AUTHENTICATED' }))
    ).id;
    const key = await ok(call(world.d, world.admin, 'POST', '/admin/api/ping-keys', { groupId, allowCreate: true }), 201);
    const userKey = await ok(call(world.d, world.admin, 'POST', '/admin/api/api-keys', { name: 'made-by-ping-user', role: 'USER' }));
    const events = subscribe(world.d, userKey.token, ['CHECK_COMPLETED']);
    try {
      await events.opened;
      expect((await ping(world.d.url, `/ping/${key.key}/made-by-a-ping?create=1`)).status).toBe(200);
      const made = (await ok(call(world.d, world.admin, 'GET', '/admin/api/resources'))).find((r: any) => r.target === 'made-by-a-ping');
      expect(made).toMatchObject({ resourceType: 'PUSH', groups: [{ id: groupId, name: 'made-by-ping' }] });
      // Its first ping's event is the one a USER must see: the monitoring module learned the new resource from the bus.
      await until(() => events.events.some((e) => e.data.resourceId === made.id));
      expect(events.events.find((e) => e.data.resourceId === made.id)!.data).toMatchObject({ status: 'AVAILABLE' });
    } finally {
      events.close();
    }
  });
});
