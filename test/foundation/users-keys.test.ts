import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, login, send } from '../helpers/http.ts';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

describe('users and API keys endpoints', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });

  const post = (path: string, body: unknown, token = d.adminKey) =>
    send(d.url, 'POST', path, { headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const put = (path: string, body: unknown) =>
    send(d.url, 'PUT', path, { headers: { ...bearer(d.adminKey), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const del = (path: string) => send(d.url, 'DELETE', path, { headers: bearer(d.adminKey) });

  it('creates a user with the contract shape; a taken username gets 409', async () => {
    const res = await post('/admin/api/users', { username: 'dave', password: 'dave-password-1', role: 'USER' });
    expect(res.status).toBe(200);
    const user = res.json();
    expect(Object.keys(user).sort()).toEqual(['createdAt', 'id', 'lastLoginMethod', 'role', 'sso', 'twoFactor', 'updatedAt', 'username']);
    expect(user).toMatchObject({ id: expect.any(Number), username: 'dave', role: 'USER' });
    expect(user.createdAt).toMatch(DATE_TIME);
    expect(user.updatedAt).toMatch(DATE_TIME);
    const dup = await post('/admin/api/users', { username: 'dave', password: 'other-password-1', role: 'ADMIN' });
    expect(fieldsOf(expectProblem(dup, 409))).toEqual(['username']);
    const list = await d.admin.call(operations.listUsers);
    expect(list.map((u) => u.username)).toEqual(['admin', 'dave']);
  });

  it('rejects invalid user bodies with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ username: 'erin', password: 'short', role: 'USER' }, 'password'],
      [{ username: 'erin', password: 'erin-password-1', role: 'ROOT' }, 'role'],
      [{ username: 'erin', password: 'erin-password-1', role: 'USER', admin: true }, 'admin'],
      [{ password: 'erin-password-1', role: 'USER' }, 'username'],
      [{ username: 'erin', password: 12345678901234, role: 'USER' }, 'password'],
      [{ username: 'has space', password: 'erin-password-1', role: 'USER' }, 'username'],
    ];
    for (const [body, field] of cases) {
      const problem = expectProblem(await post('/admin/api/users', body), 400);
      expect(fieldsOf(problem), JSON.stringify(body)).toEqual([field]);
      expect(problem.type).toBe('urn:monctl:problem:validation');
    }
    expect(fieldsOf(expectProblem(await put('/admin/api/users/1', { role: 'ROOT' }), 400))).toEqual(['role']);
    expect(fieldsOf(expectProblem(await put('/admin/api/users/1', { name: 'x' }), 400))).toEqual(['name']);
    expect((await d.admin.call(operations.listUsers)).map((u) => u.username)).not.toContain('erin');
  });

  it("updates role and password; a new password ends the old one and the user's sessions", async () => {
    const created = (await post('/admin/api/users', { username: 'fay', password: 'fay-password-01', role: 'USER' })).json();
    const session = await login(d.url, 'fay', 'fay-password-01');
    expect((await send(d.url, 'GET', '/api/me', { headers: session.jar.header() })).status).toBe(200);

    const promoted = await put(`/admin/api/users/${created.id}`, { role: 'ADMIN' });
    expect(promoted.status).toBe(200);
    expect(promoted.json()).toMatchObject({ id: created.id, username: 'fay', role: 'ADMIN' });
    const mine = await send(d.url, 'GET', '/api/me', { headers: session.jar.header() });
    expect(mine.json().role).toBe('ADMIN');

    const changed = await put(`/admin/api/users/${created.id}`, { password: 'fay-password-02' });
    expect(changed.status).toBe(200);
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: session.jar.header() }), 401);
    expect((await login(d.url, 'fay', 'fay-password-01')).res.headers.location).toBe('/login?error');
    expect((await login(d.url, 'fay', 'fay-password-02')).res.headers.location).toBe('/api');

    expectProblem(await put('/admin/api/users/999999', { role: 'USER' }), 404);
  });

  it('deletes a user, and the keys that user created go with it', async () => {
    const user = (await post('/admin/api/users', { username: 'gil', password: 'gil-password-01', role: 'ADMIN' })).json();
    const { jar, csrf } = await login(d.url, 'gil', 'gil-password-01');
    const keyRes = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'gil-key' }),
    });
    expect(keyRes.status).toBe(200);
    const key = keyRes.json();
    expect(key.createdBy).toBe('gil');
    const res = await del(`/admin/api/users/${user.id}`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'deleted' });
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: bearer(key.token) }), 401);
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: jar.header() }), 401);
    expectProblem(await del(`/admin/api/users/${user.id}`), 404);
  });

  it('refuses to delete or demote the last ADMIN with 409', async () => {
    const users = await d.admin.call(operations.listUsers);
    // Demote every other ADMIN first, so that `admin` is the last one.
    for (const u of users)
      if (u.role === 'ADMIN' && u.username !== 'admin')
        await d.admin.call(operations.updateUser, { params: { id: u.id }, body: { role: 'USER' } });
    const admin = users.find((u) => u.username === 'admin')!;
    expectProblem(await del(`/admin/api/users/${admin.id}`), 409);
    expectProblem(await put(`/admin/api/users/${admin.id}`, { role: 'USER' }), 409);
    expect((await d.admin.call(operations.listUsers)).find((u) => u.id === admin.id)!.role).toBe('ADMIN');
    // With a second ADMIN, demoting the first is allowed.
    const other = (await post('/admin/api/users', { username: 'hal', password: 'hal-password-01', role: 'ADMIN' })).json();
    expect((await put(`/admin/api/users/${other.id}`, { role: 'USER' })).status).toBe(200);
  });

  it("returns a key's token once, never in lists; names are unique", async () => {
    const res = await post('/admin/api/api-keys', { name: 'ci' });
    expect(res.status).toBe(200);
    const key = res.json();
    expect(Object.keys(key).sort()).toEqual([
      'createdAt',
      'createdBy',
      'expiresAt',
      'id',
      'lastUsedAt',
      'name',
      'role',
      'routeIds',
      'token',
    ]);
    expect(key).toMatchObject({ name: 'ci', role: 'ADMIN', createdBy: 'admin', expiresAt: null, lastUsedAt: null, routeIds: [] });
    expect(key.createdAt).toMatch(DATE_TIME);
    expect(key.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const list = await send(d.url, 'GET', '/admin/api/api-keys', { headers: bearer(d.adminKey) });
    expect(list.text).not.toContain(key.token);
    for (const k of list.json()) expect(k).not.toHaveProperty('token');
    expect(list.json().find((k: { id: number }) => k.id === key.id)).toEqual({ ...key, token: undefined, lastUsedAt: null });

    expect(fieldsOf(expectProblem(await post('/admin/api/api-keys', { name: 'ci', role: 'USER' }), 409))).toEqual(['name']);
    expect(fieldsOf(expectProblem(await post('/admin/api/api-keys', { name: '' }), 400))).toEqual(['name']);
    expect(fieldsOf(expectProblem(await post('/admin/api/api-keys', { name: 'x', role: 'GOD' }), 400))).toEqual(['role']);
    const badDate = expectProblem(await post('/admin/api/api-keys', { name: 'x', expiresAt: 'tomorrow' }), 400);
    expect(badDate.errors).toEqual([{ field: 'expiresAt', message: expect.stringMatching(/date-time/) }]);
    expect(fieldsOf(expectProblem(await post('/admin/api/api-keys', { name: 'x', expiresAt: '2030-02-30T00:00:00' }), 400))).toEqual([
      'expiresAt',
    ]);
    expect(fieldsOf(expectProblem(await post('/admin/api/api-keys', { name: 'x', token: 'mine' }), 400))).toEqual(['token']);
  });

  it("sets createdBy to the creating user's username, also through a key that user created", async () => {
    await post('/admin/api/users', { username: 'ivy', password: 'ivy-password-01', role: 'ADMIN' });
    const { jar, csrf } = await login(d.url, 'ivy', 'ivy-password-01');
    const viaSession = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ivy-1' }),
    });
    expect(viaSession.json().createdBy).toBe('ivy');
    const viaKey = await post('/admin/api/api-keys', { name: 'ivy-2', role: 'USER' }, viaSession.json().token);
    expect(viaKey.status).toBe(200);
    expect(viaKey.json()).toMatchObject({ createdBy: 'ivy', role: 'USER' });
  });
});
