import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, login, send, until } from '../helpers/http.ts';

const USER_PASSWORD = 'plain-user-password';

describe('credentials', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
    await d.admin.call(operations.createUser, { body: { username: 'uma', password: USER_PASSWORD, role: 'USER' } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  const me = (headers: Record<string, string>) => send(d.url, 'GET', '/api/me', { headers });

  /** 401 problem+json with the Bearer challenge. */
  function expect401(res: Awaited<ReturnType<typeof me>>) {
    expectProblem(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  }

  it('accepts the ADMIN key as Bearer, ApiKey and X-API-KEY', async () => {
    const forms: Array<Record<string, string>> = [
      { authorization: `Bearer ${d.adminKey}` },
      { authorization: `ApiKey ${d.adminKey}` },
      { 'x-api-key': d.adminKey },
    ];
    for (const headers of forms) {
      const res = await me(headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.json()).toMatchObject({ username: 'admin', role: 'ADMIN', via: 'api-key' });
      const admin = await send(d.url, 'GET', '/admin/api/users', { headers });
      expect(admin.status).toBe(200);
    }
  });

  it('rejects anonymous callers with 401 and WWW-Authenticate: Bearer', async () => {
    expect401(await me({}));
    expect401(await send(d.url, 'GET', '/admin/api/users'));
  });

  it('rejects a revoked key on its very next request', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'to-revoke' } });
    expect((await me(bearer(key.token))).status).toBe(200);
    const revoked = await send(d.url, 'DELETE', `/admin/api/api-keys/${key.id}`, { headers: bearer(d.adminKey) });
    expect(revoked.status).toBe(200);
    expect(revoked.json()).toEqual({ status: 'deleted' });
    expect401(await me(bearer(key.token)));
    expect401(await me({ 'x-api-key': key.token }));
    // A second revoke finds nothing.
    expectProblem(await send(d.url, 'DELETE', `/admin/api/api-keys/${key.id}`, { headers: bearer(d.adminKey) }), 404);
  });

  it('rejects a key once it has expired', async () => {
    const expiresAt = new Date(Date.now() + 2_500).toISOString();
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'short-lived', expiresAt } });
    expect(key.expiresAt).not.toBeNull();
    expect(decodeJwt(key.token).exp).toBeDefined();
    // Usable now (unless the machine is so slow it already expired: then the poll below ends at once).
    const first = await me(bearer(key.token));
    if (Date.now() < Date.parse(expiresAt) - 1_000) expect(first.status).toBe(200);
    await until(() => Date.now() > Date.parse(expiresAt) + 1_000);
    expect401(await me(bearer(key.token)));
  });

  it('rejects a past expiresAt at creation', async () => {
    const res = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'already-expired', expiresAt: '2001-01-01T00:00:00Z' }),
    });
    const problem = expectProblem(res, 400);
    expect(problem.errors.map((e: { field: string }) => e.field)).toEqual(['expiresAt']);
  });

  it('rejects garbage, foreign-signed and unsigned tokens with 401', async () => {
    const claims = decodeJwt(d.adminKey);
    const foreign = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode('another-secret-another-secret-32'));
    const unsigned = new UnsecuredJWT({ ...claims }).encode();
    expect(unsigned.endsWith('.')).toBe(true);
    // A tampered payload with the real signature.
    const [h, , s] = d.adminKey.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, jti: '999' })).toString('base64url')}.${s}`;
    for (const token of ['garbage', 'a.b.c', foreign, unsigned, tampered, `${d.adminKey}x`]) {
      expect401(await me(bearer(token)));
      expect401(await me({ 'x-api-key': token }));
      // A bad key is not silently anonymous, even where anonymous callers are welcome.
      expect401(await send(d.url, 'GET', '/actuator/health', { headers: bearer(token) }));
    }
    expect401(await me({ authorization: 'Bearer' }));
    expect401(await me({ authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` }));
  });

  it('gives a USER key 403 on an ADMIN endpoint and 200 on /api/me', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'user-key', role: 'USER' } });
    const mine = await me(bearer(key.token));
    expect(mine.status).toBe(200);
    expect(mine.json()).toMatchObject({ role: 'USER', via: 'api-key', keyId: key.id });
    const denied = await send(d.url, 'GET', '/admin/api/users', { headers: bearer(key.token) });
    expect(expectProblem(denied, 403).type).toMatch(/forbidden/);
    const create = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...bearer(key.token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'escalate' }),
    });
    expectProblem(create, 403);
  });

  it('gives a USER session 403 on an ADMIN endpoint and 200 on /api/me', async () => {
    const { jar, csrf, res } = await login(d.url, 'uma', USER_PASSWORD);
    expect(res.headers.location).toBe('/api');
    const mine = await me(jar.header());
    expect(mine.status).toBe(200);
    expect(mine.json()).toEqual({
      username: 'uma',
      role: 'USER',
      via: 'session',
      keyId: null,
      login: 'password',
      twoFactor: false,
      sso: false,
    });
    expectProblem(await send(d.url, 'GET', '/admin/api/users', { headers: jar.header() }), 403);
    const post = await send(d.url, 'POST', '/admin/api/users', {
      headers: { ...jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'evil', password: 'evil-password-1', role: 'ADMIN' }),
    });
    expectProblem(post, 403);
  });

  it("never revives a revoked key's token for a later key", async () => {
    const old = await d.admin.call(operations.createApiKey, { body: { name: 'newest' } });
    await d.admin.call(operations.revokeApiKey, { params: { id: old.id } });
    const next = await d.admin.call(operations.createApiKey, { body: { name: 'after-newest', role: 'USER' } });
    expect(next.id).not.toBe(old.id);
    expect401(await me(bearer(old.token)));
  });

  it("caps a key at its creator's current role", async () => {
    const user = await d.admin.call(operations.createUser, {
      body: { username: 'temp-admin', password: 'temp-admin-password', role: 'ADMIN' },
    });
    const { jar, csrf } = await login(d.url, 'temp-admin', 'temp-admin-password');
    const created = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'temp-admin-key' }),
    });
    const key = created.json();
    expect(key).toMatchObject({ role: 'ADMIN', createdBy: 'temp-admin' });
    expect((await send(d.url, 'GET', '/admin/api/users', { headers: bearer(key.token) })).status).toBe(200);
    await d.admin.call(operations.updateUser, { params: { id: user.id }, body: { role: 'USER' } });
    expectProblem(await send(d.url, 'GET', '/admin/api/users', { headers: bearer(key.token) }), 403);
    expect((await me(bearer(key.token))).json()).toMatchObject({ username: 'temp-admin', role: 'USER' });
  });

  it('records lastUsedAt of a key that was used', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'used-key', role: 'USER' } });
    expect(key.lastUsedAt).toBeNull();
    expect((await me(bearer(key.token))).status).toBe(200);
    await until(async () => (await d.admin.call(operations.listApiKeys)).find((k) => k.id === key.id)?.lastUsedAt != null);
  });
});
