import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, describe, expect, it } from 'vitest';
import { runMonctl, tempHome } from '../cli/run.ts';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, login, send } from '../helpers/http.ts';

const home = tempHome();
const daemons: TestDaemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop();
  home.cleanup();
});

const resetAdmin = (dataDir: string, env: Record<string, string> = {}) =>
  runMonctl(['daemon', 'reset-admin', '--data-dir', dataDir], { env });
const keyIn = (dataDir: string) => readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
const me = (d: TestDaemon, token: string) => send(d.url, 'GET', '/api/me', { headers: bearer(token) });
const json = (token: string) => ({ ...bearer(token), 'content-type': 'application/json' });

describe('monctl daemon reset-admin', () => {
  it('on a running daemon: new password and key work at once, the old ones no longer do; admin is promoted back', {
    timeout: 60_000,
  }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const session = await login(d.url, 'admin', ADMIN_PASSWORD);
    expect((await send(d.url, 'GET', '/api/me', { headers: session.jar.header() })).status).toBe(200);
    // Demote admin (through a second ADMIN, which the last-ADMIN rule needs).
    const ops = (
      await send(d.url, 'POST', '/admin/api/users', {
        headers: json(d.adminKey),
        body: JSON.stringify({ username: 'ops', password: 'ops-password-01', role: 'ADMIN' }),
      })
    ).json();
    expect(ops.role).toBe('ADMIN');
    const users = (await send(d.url, 'GET', '/admin/api/users', { headers: bearer(d.adminKey) })).json();
    const adminId = users.find((u: { username: string }) => u.username === 'admin').id;
    expect((await send(d.url, 'PUT', `/admin/api/users/${adminId}`, { headers: json(d.adminKey), body: '{"role":"USER"}' })).status).toBe(
      200,
    );
    expect((await me(d, d.adminKey)).json().role).toBe('USER');

    const password = 'the-new-admin-password';
    const run = await resetAdmin(d.dataDir, { MONCTL_ADMIN_PASSWORD: password });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain(password);
    const key = keyIn(d.dataDir);
    expect(key).not.toBe(d.adminKey);
    expect(statSync(join(d.dataDir, 'admin-api-key')).mode & 0o777).toBe(0o600);

    expect((await me(d, key)).json()).toMatchObject({ username: 'admin', role: 'ADMIN', via: 'api-key' });
    expectProblem(await me(d, d.adminKey), 401); // the key the file held is revoked
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: session.jar.header() }), 401); // sessions ended
    expect((await login(d.url, 'admin', ADMIN_PASSWORD)).res.headers.location).toBe('/login?error');
    const fresh = await login(d.url, 'admin', password);
    expect(fresh.res.headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: fresh.jar.header() })).json().role).toBe('ADMIN');
    // The running daemon protects the new key in the file, read at request time.
    const newKeyId = (await me(d, key)).json().keyId;
    expectProblem(await send(d.url, 'DELETE', `/admin/api/api-keys/${newKeyId}`, { headers: bearer(key) }), 409);

    // Without MONCTL_ADMIN_PASSWORD: a random password, printed once on stderr.
    const random = await resetAdmin(d.dataDir);
    expect(random.code, random.stderr).toBe(0);
    const printed = /with password (\S+) \(shown once\)/.exec(random.stderr)?.[1];
    expect(printed, random.stderr).toBeDefined();
    expect(random.stdout).toBe('');
    expect((await login(d.url, 'admin', printed!)).res.headers.location).toBe('/api');
    expect((await me(d, keyIn(d.dataDir))).status).toBe(200);
    expectProblem(await me(d, key), 401);
  });

  it('on a stopped daemon whose admin was deleted: recreates admin as ADMIN with a working key', { timeout: 60_000 }, async () => {
    const dataDir = join(home.dir, 'stopped');
    const first = await startDaemon({ dataDir });
    daemons.push(first);
    await send(first.url, 'POST', '/admin/api/users', {
      headers: json(first.adminKey),
      body: JSON.stringify({ username: 'ops', password: 'ops-password-01', role: 'ADMIN' }),
    });
    const users = (await send(first.url, 'GET', '/admin/api/users', { headers: bearer(first.adminKey) })).json();
    const adminId = users.find((u: { username: string }) => u.username === 'admin').id;
    // The key file protects admin; without it, admin can go (and its keys with it).
    rmSync(join(dataDir, 'admin-api-key'));
    expect((await send(first.url, 'DELETE', `/admin/api/users/${adminId}`, { headers: bearer(first.adminKey) })).status).toBe(200);
    expect(await first.stop()).toBe(0);

    const run = await resetAdmin(dataDir, { MONCTL_ADMIN_PASSWORD: 'recreated-password-1' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('created user "admin"');
    expect(statSync(join(dataDir, 'admin-api-key')).mode & 0o777).toBe(0o600);

    const second = await startDaemon({ dataDir });
    daemons.push(second);
    expect((await me(second, second.adminKey)).json()).toMatchObject({ username: 'admin', role: 'ADMIN' });
    expect((await login(second.url, 'admin', 'recreated-password-1')).res.headers.location).toBe('/api');
    const names = (await send(second.url, 'GET', '/admin/api/users', { headers: bearer(second.adminKey) }))
      .json()
      .map((u: { username: string }) => u.username);
    expect(names.sort()).toEqual(['admin', 'ops']);
  });

  it('resets the second factor of admin too: after it, the new password alone logs in', { timeout: 60_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const session = await login(d.url, 'admin', ADMIN_PASSWORD);
    const headers = { ...session.jar.header(), 'x-csrf-token': session.csrf, 'content-type': 'application/json' };
    const started = (await send(d.url, 'POST', '/api/me/two-factor', { headers, body: '{}' })).json();
    const code = TOTP.generate({ secret: Secret.fromBase32(started.secret), timestamp: Date.now() });
    const confirmed = await send(d.url, 'POST', '/api/me/two-factor/confirm', { headers, body: JSON.stringify({ code }) });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await login(d.url, 'admin', ADMIN_PASSWORD)).res.headers.location).toBe('/login/2fa');

    const password = 'after-a-lost-phone-1';
    const run = await resetAdmin(d.dataDir, { MONCTL_ADMIN_PASSWORD: password });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('its second factor is reset');
    const fresh = await login(d.url, 'admin', password);
    expect(fresh.res.headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: fresh.jar.header() })).json()).toMatchObject({
      login: 'password',
      twoFactor: false,
    });
    const status = (await send(d.url, 'GET', '/api/me/two-factor', { headers: fresh.jar.header() })).json();
    expect(status).toMatchObject({ enabled: false, pending: false, recoveryCodesLeft: 0 });
  });

  it('refuses a data dir without a database (exit 3) and a short password (exit 2), changing nothing', async () => {
    const missing = await resetAdmin(join(home.dir, 'nothing-here'));
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no database at .*nothing-here\/monctl\.db/);
    const short = await resetAdmin(join(home.dir, 'stopped'), { MONCTL_ADMIN_PASSWORD: 'short' });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('MONCTL_ADMIN_PASSWORD: must be at least 12 characters');
  });
});
