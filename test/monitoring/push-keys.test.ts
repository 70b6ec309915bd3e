import { describe, expect, it } from 'vitest';
import { type Caller, call, headersFor, ok } from './helpers.ts';
import { PUBLIC_URL, refused, usePushWorld } from './push-helpers.ts';

// Ping keys (/admin/api/ping-keys) and what public views show of a PUSH resource: its slug,
// never the uuid of its ping URL (docs/API.md#push-checks).
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
