import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMonctl, tempHome } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, CookieJar, expectProblem, fieldsOf, send, sendJson } from '../helpers/http.ts';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { spawnMonctl } from './live-monctl.ts';

/**
 * `monctl login --sso` against the real `oidc-provider` and a real daemon:
 * the device grant, the loopback redirect (forced, and as the fallback of a
 * provider without the device grant), and the refusals.
 */
const oidcArgs = (p: TestOidcProvider) => [
  '--oidc-issuer',
  p.issuer,
  '--oidc-client-id',
  p.client.clientId,
  '--oidc-scopes',
  'openid email profile groups',
  '--oidc-roles',
  'monctl-admins=ADMIN',
];

async function startSsoDaemon(p: TestOidcProvider, args: string[] = []): Promise<TestDaemon> {
  const d = await startDaemon({ args: [...oidcArgs(p), ...args], env: { MONCTL_OIDC_CLIENT_SECRET: p.client.clientSecret } });
  p.allowRedirect(`${d.url}/login/sso/callback`);
  return d;
}

const home = tempHome();
let provider: TestOidcProvider;
let d: TestDaemon;

beforeAll(async () => {
  provider = await startOidcProvider();
  d = await startSsoDaemon(provider, TEST_CLOCK_ARGS);
});

afterAll(async () => {
  await d?.stop();
  await provider?.stop();
  home.cleanup();
});

const cliEnv = (dir: string) => ({ MONCTL_CONFIG_DIR: dir, XDG_DATA_HOME: join(dir, 'nodata'), BROWSER: 'true' });
const configOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const post = (path: string, body: unknown) => sendJson(d.url, 'POST', path, body, {});

/** GETs the daemon's SSO callback with the browser's cookies: where it sends the browser (the CLI's loopback URL). */
async function callbackHop(daemon: TestDaemon, callback: string, jar: CookieJar): Promise<string> {
  const url = new URL(callback);
  const res = await send(daemon.url, 'GET', url.pathname + url.search, { headers: jar.header() });
  expect(res.status, res.text).toBe(302);
  return String(res.headers.location);
}

/** Drives a loopback sign-in the CLI printed: the daemon's start, the provider, the daemon's callback; the CLI's loopback URL. */
async function driveLoopback(daemon: TestDaemon, start: string, login: string): Promise<string> {
  const jar = new CookieJar();
  const begin = await send(daemon.url, 'GET', new URL(start).pathname + new URL(start).search);
  expect(begin.status, begin.text).toBe(302);
  jar.store(begin);
  const callback = await signInAtProvider(String(begin.headers.location), login);
  expect(callback.startsWith(`${daemon.url}/login/sso/callback?`)).toBe(true);
  return callbackHop(daemon, callback, jar);
}

describe('device grant', () => {
  it('monctl login --sso signs alice in: the context is saved, its key works as alice (ADMIN from her group)', async () => {
    const cli = spawnMonctl(['login', '--sso', '--server', d.url], cliEnv(home.dir));
    const [, complete] = await cli.stderrMatch(/or open (\S+)/);
    expect(new URL(complete!).origin).toBe(provider.issuer);
    expect(await signInAtProvider(complete!, 'alice')).toBe('done');
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/enter the code \S+/);
    expect(done.stdout).toContain('as alice@example.com (ADMIN)');
    const context = configOf(home.dir).contexts[new URL(d.url).host];
    expect(context).toMatchObject({ server: d.url, user: 'alice@example.com', role: 'ADMIN', managed: true });
    const me = await send(d.url, 'GET', '/api/me', { headers: bearer(context.apiKey) });
    expect(me.json()).toMatchObject({ username: 'alice@example.com', role: 'ADMIN', via: 'api-key', sso: true });
    const info = await runMonctl(['info', '-o', 'json'], { env: cliEnv(home.dir) });
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toContain('alice@example.com');
    const keys = await d.admin.call((await import('../../src/api/operations.ts')).operations.listApiKeys);
    const key = keys.find((k) => k.id === context.keyId);
    expect(key).toMatchObject({ role: 'ADMIN', createdBy: 'alice@example.com' });
    expect(key!.name).toMatch(/^monctl alice@example\.com@\S+ \d{4}-\d\d-\d\dT/);
  });

  it('a poll sooner than the interval is slow_down without asking the provider; a refusal at the provider is 403 sso-denied', async () => {
    const started = await post('/api/auth/sso/device', undefined);
    expect(started.status, started.text).toBe(200);
    const { handle, interval } = started.json();
    expect(interval).toBeGreaterThanOrEqual(1);
    expect((await post('/api/auth/sso/device/token', { handle })).json()).toEqual({ status: 'pending' });
    expect((await post('/api/auth/sso/device/token', { handle })).json()).toEqual({ status: 'slow_down' });
    // Another grant, refused at the provider: its first poll is not paced.
    const refused = (await post('/api/auth/sso/device', undefined)).json();
    expect(await signInAtProvider(refused.verificationUriComplete, 'bob', { abort: true })).toBe('done');
    const answer = await post('/api/auth/sso/device/token', { handle: refused.handle });
    expect(expectProblem(answer, 403).type).toBe('urn:monctl:problem:sso-denied');
  });

  it('a handle that is not a device grant of this daemon is 400 sso-handle', async () => {
    for (const handle of ['v1:AAAA', 'not sealed at all']) {
      expect(expectProblem(await post('/api/auth/sso/device/token', { handle }), 400).type).toBe('urn:monctl:problem:sso-handle');
    }
    // Sealed by this daemon in the same box, but a sign-in transaction (the cookie of GET /login/sso/cli), not a grant.
    const begin = await send(d.url, 'GET', '/login/sso/cli?port=40000&state=abcdefghijklmnop0123');
    const sealed = /=([^;]+)/.exec(String(begin.headers['set-cookie']))![1]!;
    expect(expectProblem(await post('/api/auth/sso/device/token', { handle: sealed }), 400).type).toBe('urn:monctl:problem:sso-handle');
    // A real handle with one character changed.
    const { handle } = (await post('/api/auth/sso/device', undefined)).json();
    const flipped = handle.slice(0, 10) + (handle[10] === 'A' ? 'B' : 'A') + handle.slice(11);
    expect(expectProblem(await post('/api/auth/sso/device/token', { handle: flipped }), 400).type).toBe('urn:monctl:problem:sso-handle');
    expect(fieldsOf(expectProblem(await post('/api/auth/sso/device/token', {}), 400))).toContain('handle');
  });

  it('an ID token signed by a key the provider never published is refused at the poll (400 sso-id-token)', async () => {
    const { handle, verificationUriComplete } = (await post('/api/auth/sso/device', undefined)).json();
    expect(await signInAtProvider(verificationUriComplete, 'alice')).toBe('done');
    provider.tamper((claims) => ({ claims, key: 'foreign' }));
    try {
      const answer = await post('/api/auth/sso/device/token', { handle });
      expect(expectProblem(answer, 400).type).toBe('urn:monctl:problem:sso-id-token');
    } finally {
      provider.tamper(undefined);
    }
    // The provider gave its tokens once: the grant is spent, not open for another try.
    expect(expectProblem(await post('/api/auth/sso/device/token', { handle }), 400).type).toBe('urn:monctl:problem:sso-handle');
  });
});

describe('loopback redirect', () => {
  it('monctl login --sso --no-device: the browser sign-in ends on the CLI loopback port; its code works once', async () => {
    const dir = tempHome();
    try {
      const cli = spawnMonctl(['login', '--sso', '--no-device', '--server', d.url], cliEnv(dir.dir));
      const [, start] = await cli.stderrMatch(/^ {2}(http\S+\/login\/sso\/cli\?\S+)$/m);
      const loopback = await driveLoopback(d, start!, 'bob');
      const target = new URL(loopback);
      expect(target.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(target.searchParams.get('state')).toBe(new URL(start!).searchParams.get('state'));
      // A wrong state is not taken: the CLI keeps waiting for its own.
      const forged = new URL(loopback);
      forged.searchParams.set('state', 'someone-elses-state-0000');
      expect((await fetch(forged)).status).toBe(400);
      const page = await fetch(loopback);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('You can close this tab');
      const done = await cli.done;
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('as bob@example.com (USER)');
      expect(configOf(dir.dir).contexts[new URL(d.url).host]).toMatchObject({ user: 'bob@example.com', role: 'USER', managed: true });
      const again = await post('/api/auth/sso/handoff', { code: target.searchParams.get('code') });
      expect(expectProblem(again, 400).type).toBe('urn:monctl:problem:sso-handoff');
    } finally {
      dir.cleanup();
    }
  });

  it('refuses a loopback start with a bad port or state, and an unknown hand-off code', async () => {
    for (const [query, field] of [
      ['port=80&state=abcdefghijklmnop0123', 'port'],
      ['port=99999&state=abcdefghijklmnop0123', 'port'],
      ['port=4000x&state=abcdefghijklmnop0123', 'port'],
      ['port=40000&state=short', 'state'],
      ['port=40000&state=abcdefghijklmnop%2F0123', 'state'],
    ] as const) {
      expect(fieldsOf(expectProblem(await send(d.url, 'GET', `/login/sso/cli?${query}`), 400)), query).toEqual([field]);
    }
    const unknown = await post('/api/auth/sso/handoff', { code: 'x'.repeat(43) });
    expect(expectProblem(unknown, 400).type).toBe('urn:monctl:problem:sso-handoff');
  });

  // Moves the daemon's clock: last in the file, the grants above are done with.
  it('a device grant and a hand-off code past their lifetime are refused: 400 sso-expired, 400 sso-handoff', async () => {
    const { handle } = (await post('/api/auth/sso/device', undefined)).json();
    const begin = await send(d.url, 'GET', '/login/sso/cli?port=40001&state=expiry-test-state-0001');
    const jar = new CookieJar();
    jar.store(begin);
    const callback = await signInAtProvider(String(begin.headers.location), 'alice');
    const code = new URL(await callbackHop(d, callback, jar)).searchParams.get('code');
    await moveClock(d, { advanceSeconds: 11 * 60 });
    expect(expectProblem(await post('/api/auth/sso/device/token', { handle }), 400).type).toBe('urn:monctl:problem:sso-expired');
    expect(expectProblem(await post('/api/auth/sso/handoff', { code }), 400).type).toBe('urn:monctl:problem:sso-handoff');
  });
});

describe('a provider without the device grant, a daemon without single sign-on', () => {
  let plainProvider: TestOidcProvider;
  let loopbackOnly: TestDaemon;
  let noSso: TestDaemon;

  beforeAll(async () => {
    plainProvider = await startOidcProvider({ deviceFlow: false });
    [loopbackOnly, noSso] = await Promise.all([startSsoDaemon(plainProvider), startDaemon()]);
  });

  afterAll(async () => {
    await Promise.all([loopbackOnly?.stop(), noSso?.stop()]);
    await plainProvider?.stop();
  });

  it('monctl login --sso falls back to the loopback sign-in (the daemon answers 409 sso-no-device-grant)', async () => {
    const refused = await sendJson(loopbackOnly.url, 'POST', '/api/auth/sso/device', undefined, {});
    expect(expectProblem(refused, 409).type).toBe('urn:monctl:problem:sso-no-device-grant');
    const dir = tempHome();
    try {
      const cli = spawnMonctl(['login', '--sso', '--server', loopbackOnly.url], cliEnv(dir.dir));
      const [, start] = await cli.stderrMatch(/^ {2}(http\S+\/login\/sso\/cli\?\S+)$/m);
      await expect(cli.stderrMatch(/no device sign-in/)).resolves.toBeTruthy();
      const page = await fetch(await driveLoopback(loopbackOnly, start!, 'alice'));
      expect(page.status).toBe(200);
      const done = await cli.done;
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('as alice@example.com (ADMIN)');
    } finally {
      dir.cleanup();
    }
  });

  it('monctl login --sso against a daemon without single sign-on says so and exits 4', async () => {
    expect(expectProblem(await sendJson(noSso.url, 'POST', '/api/auth/sso/device', undefined, {}), 404).type).toBe(
      'urn:monctl:problem:sso-off',
    );
    for (const args of [['--sso'], ['--sso', '--no-device']]) {
      const dir = tempHome();
      try {
        const res = await runMonctl(['login', ...args, '--server', noSso.url], { env: cliEnv(dir.dir) });
        expect(res.code, res.stderr).toBe(4);
        expect(res.stderr).toContain('has no single sign-on');
      } finally {
        dir.cleanup();
      }
    }
  });
});
