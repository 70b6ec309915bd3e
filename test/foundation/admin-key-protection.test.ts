import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, send } from '../helpers/http.ts';

describe('the key in <data-dir>/admin-api-key is protected', () => {
  let d: TestDaemon;
  let keyFile: string;
  beforeAll(async () => {
    d = await startDaemon();
    keyFile = join(d.dataDir, 'admin-api-key');
  });
  afterAll(async () => {
    await d?.stop();
  });

  const post = (path: string, body: unknown) =>
    send(d.url, 'POST', path, { headers: { ...bearer(d.adminKey), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const del = (path: string, token = d.adminKey) => send(d.url, 'DELETE', path, { headers: bearer(token) });
  const me = (token: string) => send(d.url, 'GET', '/api/me', { headers: bearer(token) });

  it('refuses to revoke that key with 409 naming the file; other keys revoke', async () => {
    const fileKeyId = (await me(d.adminKey)).json().keyId;
    const refused = expectProblem(await del(`/admin/api/api-keys/${fileKeyId}`), 409);
    expect(refused.detail).toContain(keyFile);
    expect(refused.detail).toContain('monctl daemon reset-admin');
    expect((await me(d.adminKey)).status).toBe(200);

    const other = (await post('/admin/api/api-keys', { name: 'other' })).json();
    expect((await del(`/admin/api/api-keys/${other.id}`)).status).toBe(200);
    expect((await me(other.token)).status).toBe(401);
  });

  it('refuses to delete the user who owns that key with 409 naming the file; other users delete', async () => {
    // A second ADMIN, so that the last-ADMIN rule is not what refuses.
    await post('/admin/api/users', { username: 'second', password: 'second-password-1', role: 'ADMIN' });
    const users = (await send(d.url, 'GET', '/admin/api/users', { headers: bearer(d.adminKey) })).json();
    const admin = users.find((u: { username: string }) => u.username === 'admin');
    const refused = expectProblem(await del(`/admin/api/users/${admin.id}`), 409);
    expect(refused.detail).toContain(keyFile);
    expect((await me(d.adminKey)).status).toBe(200);

    const bob = (await post('/admin/api/users', { username: 'bob', password: 'bob-password-01', role: 'USER' })).json();
    expect((await del(`/admin/api/users/${bob.id}`)).status).toBe(200);
    const second = users.find((u: { username: string }) => u.username === 'second');
    expect((await del(`/admin/api/users/${second.id}`)).status).toBe(200);
  });

  it('reads the file at each request: once it is gone, the key revokes', async () => {
    const spare = (await post('/admin/api/api-keys', { name: 'spare' })).json();
    const fileKeyId = (await me(d.adminKey)).json().keyId;
    renameSync(keyFile, `${keyFile}.moved`);
    try {
      expect((await del(`/admin/api/api-keys/${fileKeyId}`, spare.token)).status).toBe(200);
      expect((await me(d.adminKey)).status).toBe(401);
    } finally {
      renameSync(`${keyFile}.moved`, keyFile);
    }
    // The file now holds a revoked key: nothing left to protect, and nothing breaks.
    expectProblem(await del(`/admin/api/api-keys/${fileKeyId}`, spare.token), 404);
  });
});
