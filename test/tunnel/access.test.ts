import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { send } from '../helpers/http.ts';
import { edge, startTarget, startTunnel, type Tunnel, until } from './helpers.ts';

type Target = Awaited<ReturnType<typeof startTarget>>;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A target that counts what reaches it, per route path, and keeps the headers and URL of the last request. */
function countingTarget(): Promise<Target & { hits: Map<string, number>; last: { url: string; headers: Record<string, unknown> } }> {
  const hits = new Map<string, number>();
  const last = { url: '', headers: {} as Record<string, unknown> };
  return startTarget((req, res) => {
    const key = req.url!.split('/')[1];
    hits.set(key, (hits.get(key) ?? 0) + 1);
    last.url = req.url!;
    last.headers = req.headers;
    res.end('ok');
  }).then((t) => Object.assign(t, { hits, last }));
}

/** The newest access-log entries of a route, once there are `n`. */
async function logOf(t: Tunnel, routeId: number, n: number) {
  return until(async () => {
    const entries = await t.daemon.admin.call(operations.getRouteLog, { params: { id: routeId }, query: { limit: n } });
    return entries.length >= n && entries;
  });
}

/**
 * Access control per route at the edge (issue 17): basic auth, route keys,
 * IP allow and deny lists (X-Forwarded-For only from --trusted-proxies) and
 * rate limits. Refusals are problem+json, in the access log with the reason,
 * and never reach the target: the target counts what it gets.
 */
describe('tunnel: access control per route', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof countingTarget>>;
  const route = async (name: string, access: RouteUpdate) => {
    const id = await tunnel.httpRoute(name, `${target.url}`, `${name}.test`);
    await tunnel.daemon.admin.call(operations.updateRoute, { params: { id }, body: access });
    return id;
  };

  beforeAll(async () => {
    target = await countingTarget();
    tunnel = await startTunnel();
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('basic auth: 401 without or with wrong credentials, the target gets neither those requests nor the password', async () => {
    const id = await route('basic', { auth: 'basic', basicUsers: [{ username: 'alice', password: 'wonderland-1' }] });
    const none = await edge(tunnel.daemon.edgeUrl, 'basic.test', 'GET', '/basic/x');
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(none.headers['www-authenticate']).toBe('Basic realm="basic.test", charset="UTF-8"');
    const wrong = await edge(tunnel.daemon.edgeUrl, 'basic.test', 'GET', '/basic/x', undefined, { authorization: basic('alice', 'nope') });
    expect(wrong.status).toBe(401);
    const unknown = await edge(tunnel.daemon.edgeUrl, 'basic.test', 'GET', '/basic/x', undefined, {
      authorization: basic('bob', 'wonderland-1'),
    });
    expect(unknown.status).toBe(401);
    expect(target.hits.get('basic')).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      const ok = await edge(tunnel.daemon.edgeUrl, 'basic.test', 'GET', '/basic/x', undefined, {
        authorization: basic('alice', 'wonderland-1'),
      });
      expect(ok.status).toBe(200);
    }
    expect(target.hits.get('basic')).toBe(2);
    expect(target.last.headers.authorization).toBeUndefined();
    const log = await logOf(tunnel, id, 5);
    expect(log.map((e) => [e.status, e.error])).toEqual([
      [200, null],
      [200, null],
      [401, 'access: wrong username or password (basic auth)'],
      [401, 'access: wrong username or password (basic auth)'],
      [401, 'access: basic auth required'],
    ]);
    const detail = await tunnel.daemon.admin.call(operations.getRoute, { params: { id } });
    expect(detail).toMatchObject({ auth: 'basic', basicUsers: ['alice'] });
    expect(JSON.stringify(detail)).not.toContain('scrypt');
  });

  it('route keys: in X-API-KEY or ?token=, only for their routes; API keys do not open routes and route keys do not open the API', async () => {
    const id = await route('keyed', { auth: 'apiKey' });
    const otherId = await route('keyed-other', { auth: 'apiKey' });
    const key = await tunnel.daemon.admin.call(operations.createApiKey, { body: { name: 'keyed-key', routeIds: [id] } });
    const otherKey = await tunnel.daemon.admin.call(operations.createApiKey, { body: { name: 'other-key', routeIds: [otherId] } });
    expect(key.routeIds).toEqual([id]);
    const get = (path: string, headers: Record<string, string> = {}) =>
      edge(tunnel.daemon.edgeUrl, 'keyed.test', 'GET', path, undefined, headers);

    expect((await get('/keyed/a')).status).toBe(401);
    expect((await get('/keyed/a', { 'x-api-key': 'garbage' })).status).toBe(401);
    expect((await get('/keyed/a', { 'x-api-key': tunnel.daemon.adminKey })).status).toBe(401);
    const wrongRoute = await get('/keyed/a', { 'x-api-key': otherKey.token });
    expect(wrongRoute.status).toBe(403);
    expect(JSON.parse(wrongRoute.text)).toMatchObject({ status: 403, detail: 'access: the key is not scoped to this route' });
    expect(target.hits.get('keyed')).toBeUndefined();

    expect((await get('/keyed/a', { 'x-api-key': key.token })).status).toBe(200);
    expect(target.last.headers['x-api-key']).toBeUndefined();
    expect((await get(`/keyed/b?x=1&token=${encodeURIComponent(key.token)}&y=a%20b`)).status).toBe(200);
    expect(target.last.url).toBe('/keyed/b?x=1&y=a%20b');
    expect(target.hits.get('keyed')).toBe(2);

    // A route key is no API credential.
    expect((await send(tunnel.daemon.url, 'GET', '/admin/api/routes', { headers: { 'x-api-key': key.token } })).status).toBe(401);
    const log = await logOf(tunnel, id, 6);
    expect(log.map((e) => e.error).slice(2)).toEqual([
      'access: the key is not scoped to this route',
      'access: invalid, expired or revoked route key',
      'access: invalid, expired or revoked route key',
      'access: API key required (X-API-KEY header or ?token=)',
    ]);
    // Revoked: refused at once.
    await tunnel.daemon.admin.call(operations.revokeApiKey, { params: { id: key.id } });
    expect((await get('/keyed/a', { 'x-api-key': key.token })).status).toBe(401);
    expect(target.hits.get('keyed')).toBe(2);
  });

  it('IP deny and allow lists: 403 for the client, and X-Forwarded-For counts for nothing without a trusted proxy', async () => {
    const denied = await route('denied', { ipDeny: ['127.0.0.0/8'] });
    const allowed = await route('allowed', { ipAllow: ['10.0.0.0/8', '127.0.0.1'] });
    const elsewhere = await route('elsewhere', { ipAllow: ['10.0.0.0/8'] });
    const res = await edge(tunnel.daemon.edgeUrl, 'denied.test', 'GET', '/denied/x');
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toMatchObject({ status: 403, detail: 'access: client 127.0.0.1 is in ipDeny' });
    expect((await edge(tunnel.daemon.edgeUrl, 'allowed.test', 'GET', '/allowed/x')).status).toBe(200);
    const spoofed = await edge(tunnel.daemon.edgeUrl, 'elsewhere.test', 'GET', '/elsewhere/x', undefined, {
      'x-forwarded-for': '10.1.2.3',
    });
    expect(spoofed.status).toBe(403);
    expect(target.hits.get('denied')).toBeUndefined();
    expect(target.hits.get('elsewhere')).toBeUndefined();
    expect(target.hits.get('allowed')).toBe(1);
    expect((await logOf(tunnel, denied, 1))[0]).toMatchObject({
      status: 403,
      error: 'access: client 127.0.0.1 is in ipDeny',
      clientIp: '127.0.0.1',
    });
    expect((await logOf(tunnel, elsewhere, 1))[0]).toMatchObject({ status: 403, error: 'access: client 127.0.0.1 is not in ipAllow' });
    expect((await logOf(tunnel, allowed, 1))[0]).toMatchObject({ status: 200, error: null });
    // Counted by reason, as TCP refusals are.
    const metrics = (await tunnel.daemon.admin.raw('GET', '/actuator/prometheus')).text;
    expect(metrics).toContain(`monctl_tunnel_access_refused_total{route="${denied}",reason="ip_denied"} 1`);
    expect(metrics).toContain(`monctl_tunnel_access_refused_total{route="${elsewhere}",reason="ip_not_allowed"} 1`);
  });

  it('rate limit per client IP with a burst: 429 with Retry-After past it, and the target counts only the admitted', async () => {
    const id = await route('limited', { rateLimit: { perSecond: 0.01, burst: 3 } });
    const statuses: number[] = [];
    let retryAfter: unknown;
    for (let i = 0; i < 6; i++) {
      const res = await edge(tunnel.daemon.edgeUrl, 'limited.test', 'GET', '/limited/x');
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers['retry-after'];
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(target.hits.get('limited')).toBe(3);
    const log = await logOf(tunnel, id, 6);
    expect(log[0]).toMatchObject({ status: 429, error: 'access: client 127.0.0.1 exceeds the rate limit of 0.01/s (burst 3)' });
  });

  it('validates access fields, naming the field', async () => {
    const id = await tunnel.httpRoute('invalid', target.url, 'invalid.test');
    const update = (body: RouteUpdate) =>
      tunnel.daemon.admin.call(operations.updateRoute, { params: { id }, body }).then(
        () => undefined,
        (err) => err,
      );
    expect(await update({ ipAllow: ['10.0.0.0/33'] })).toMatchObject({ status: 400, errors: [{ field: 'ipAllow[0]' }] });
    expect(await update({ auth: 'basic' })).toMatchObject({ status: 400, errors: [{ field: 'basicUsers' }] });
    expect(await update({ basicUsers: [{ username: 'new' }] })).toMatchObject({ status: 400, errors: [{ field: 'basicUsers[0]' }] });
    const route = await tunnel.daemon.admin.call(operations.updateRoute, {
      params: { id },
      body: { ipAllow: ['10.1.2.3/8', '::ffff:192.168.0.1'] },
    });
    expect(route.ipAllow).toEqual(['10.0.0.0/8', '192.168.0.1/32']);
  });
});

/** With the edge's peer (127.0.0.1) as a trusted proxy, X-Forwarded-For names the client. */
describe('tunnel: access control behind a trusted proxy', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof countingTarget>>;

  beforeAll(async () => {
    target = await countingTarget();
    tunnel = await startTunnel([], ['--trusted-proxies', '127.0.0.1/32,::1']);
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('allows and denies by the forwarded client, logs it, and rate-limits per forwarded client', async () => {
    const id = await tunnel.httpRoute('proxied', target.url, 'proxied.test');
    await tunnel.daemon.admin.call(operations.updateRoute, {
      params: { id },
      body: { ipAllow: ['10.0.0.0/8'], ipDeny: ['10.6.6.0/24'], rateLimit: { perSecond: 0.01, burst: 1 } },
    });
    const get = (xff?: string) =>
      edge(tunnel.daemon.edgeUrl, 'proxied.test', 'GET', '/proxied/x', undefined, xff ? { 'x-forwarded-for': xff } : {});
    expect((await get()).status).toBe(403); // the proxy itself is no allowed client
    expect((await get('10.1.1.1')).status).toBe(200);
    expect((await get('10.1.1.1')).status).toBe(429); // its own bucket is empty…
    expect((await get('10.2.2.2')).status).toBe(200); // …another client's is not
    expect((await get('10.6.6.6')).status).toBe(403);
    // Only the rightmost address not a trusted proxy counts: whatever the client put left of it is ignored.
    expect((await get('10.3.3.3, 8.8.8.8')).status).toBe(403);
    expect((await get('8.8.8.8, 10.4.4.4, 127.0.0.1')).status).toBe(200);
    expect(target.hits.get('proxied')).toBe(3);
    const log = await logOf(tunnel, id, 7);
    expect(log.map((e) => [e.clientIp, e.status])).toEqual([
      ['10.4.4.4', 200],
      ['8.8.8.8', 403],
      ['10.6.6.6', 403],
      ['10.2.2.2', 200],
      ['10.1.1.1', 429],
      ['10.1.1.1', 200],
      ['127.0.0.1', 403],
    ]);
  });

  it("appends its Forwarded element to the trusted proxy's, and sets X-Real-IP to the forwarded client", async () => {
    await tunnel.httpRoute('chain', target.url, 'chain.test');
    const res = await edge(tunnel.daemon.edgeUrl, 'chain.test', 'GET', '/chain/x', undefined, {
      'x-forwarded-for': '10.7.7.7',
      forwarded: 'for=10.7.7.7;proto=https;host=chain.test',
      'x-real-ip': '6.6.6.6',
    });
    expect(res.status).toBe(200);
    expect(target.last.headers.forwarded).toBe('for=10.7.7.7;proto=https;host=chain.test, for=127.0.0.1;proto=http;host=chain.test');
    expect(target.last.headers['x-real-ip']).toBe('10.7.7.7');
    expect(target.last.headers['x-forwarded-for']).toBe('10.7.7.7, 127.0.0.1');
  });
});
