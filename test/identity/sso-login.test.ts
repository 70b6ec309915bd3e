import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { CookieJar, expectProblem, send, sendJson, until, type WireResponse } from '../helpers/http.ts';
import { DEFAULT_USERS, type OidcTestUser, signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';

const CALLBACK = '/login/sso/callback';
const SECRET = 'monctl-test-client-secret-0123456789';

/** A browser's way through a sign-in, without a browser: the daemon's redirects with a jar, the provider's pages by signInAtProvider. */
interface Attempt {
  jar: CookieJar;
  /** The transaction cookie the daemon set at /login/sso, as an attacker who copied it would have it. */
  txJar: CookieJar;
  /** The provider's redirect back to the daemon: `/login/sso/callback?code=…&state=…`. */
  callback: string;
  res: WireResponse;
}

async function beginAt(d: TestDaemon, login: string, returnTo?: string): Promise<Omit<Attempt, 'res'>> {
  const jar = new CookieJar();
  const begin = await send(d.url, 'GET', `/login/sso${returnTo === undefined ? '' : `?return=${encodeURIComponent(returnTo)}`}`);
  expect(begin.status, begin.text).toBe(302);
  jar.store(begin);
  const txJar = new CookieJar();
  txJar.store(begin);
  const back = new URL(await signInAtProvider(String(begin.headers.location), login));
  expect(back.origin + back.pathname).toBe(`${d.url}${CALLBACK}`);
  return { jar, txJar, callback: back.pathname + back.search };
}

async function signIn(d: TestDaemon, login: string, returnTo?: string): Promise<Attempt> {
  const started = await beginAt(d, login, returnTo);
  const res = await send(d.url, 'GET', started.callback, { headers: started.jar.header() });
  started.jar.store(res);
  return { ...started, res };
}

/** The session's CSRF token, as the explorer hands it to its page. */
async function csrfOfSession(d: TestDaemon, jar: CookieJar): Promise<string> {
  const page = await send(d.url, 'GET', '/api', { headers: jar.header() });
  const token = /<meta name="monctl-csrf" content="([^"]+)">/.exec(page.text)?.[1];
  if (!token) throw new Error(`no CSRF token on /api:\n${page.text.slice(0, 500)}`);
  return token;
}

/** An event stream held open: its status, and a promise that settles when the daemon ends it. */
function openStream(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; ended: Promise<void> }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, accept: 'text/event-stream' }, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, ended: new Promise((done) => res.once('close', () => done())) });
    });
    req.once('error', reject).end();
  });
}

const me = async (d: TestDaemon, jar: CookieJar) => (await send(d.url, 'GET', '/api/me', { headers: jar.header() })).json();

describe('single sign-on at the daemon login', () => {
  // The fixture keeps these objects: a test changes bob's groups in place.
  const users: OidcTestUser[] = DEFAULT_USERS.map((u) => ({ ...u, groups: [...(u.groups ?? [])] }));
  let provider: TestOidcProvider;
  /** --oidc-users create, --oidc-roles monctl-admins=ADMIN (everyone else the default USER). */
  let d: TestDaemon;
  /** --oidc-users existing, default role none, --password-login off. */
  let strict: TestDaemon;
  /** An issuer nothing listens on. */
  let down: TestDaemon;
  /** No --oidc-issuer. */
  let plain: TestDaemon;
  /** --public-url https://monctl.example.test: reached through a proxy, as far as it knows. */
  let proxied: TestDaemon;

  beforeAll(async () => {
    provider = await startOidcProvider({ users, clientSecret: SECRET });
    const sso = ['--oidc-issuer', provider.issuer, '--oidc-client-id', 'monctl', '--oidc-scopes', 'openid,email,profile,groups'];
    const env = { MONCTL_OIDC_CLIENT_SECRET: SECRET };
    const deadIssuer = `http://127.0.0.1:${await freePort()}`;
    // One after another: five daemons starting at once on 2 busy cores outran the 20 s start timeout in CI.
    d = await startDaemon({ args: [...sso, '--oidc-roles', 'monctl-admins=ADMIN', '--oidc-name', 'Example ID'], env });
    strict = await startDaemon({
      args: [...sso, '--oidc-users', 'existing', '--oidc-roles', 'monctl-admins=ADMIN,ops=USER', '--oidc-default-role', 'none'],
      env: { ...env, MONCTL_PASSWORD_LOGIN: 'off' },
    });
    down = await startDaemon({ args: ['--oidc-issuer', deadIssuer, '--oidc-client-id', 'monctl'], env });
    plain = await startDaemon();
    proxied = await startDaemon({ args: [...sso, '--public-url', 'https://monctl.example.test/'], env });
    provider.allowRedirect(`${d.url}${CALLBACK}`);
    provider.allowRedirect(`${strict.url}${CALLBACK}`);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([d?.stop(), strict?.stop(), down?.stop(), plain?.stop(), proxied?.stop()]);
    await provider?.stop();
  });

  it('offers "Sign in with <name>" beside the password form', async () => {
    const page = await send(d.url, 'GET', '/login?return=%2Fapi%2Fme');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a class="sso" id="sso" href="/login/sso?return=%2Fapi%2Fme">Sign in with Example ID</a>');
    expect(page.text).toMatch(/<form method="post" action="\/login">/);
    expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'");
  });

  it('alice signs in: created as alice@example.com, ADMIN from her group, a session with method sso whose CSRF token works', async () => {
    const { res, jar, callback } = await signIn(d, 'alice');
    expect(res.status, res.text).toBe(302);
    expect(res.headers.location).toBe('/api');
    await until(() => d.logs.some((l) => l.msg === 'sso login' && l.username === 'alice@example.com'));
    // The code, the state and the session never reach the log.
    const logs = JSON.stringify(d.logs) + d.stderr();
    const sent = new URL(callback, d.url).searchParams;
    for (const secret of [sent.get('code')!, sent.get('state')!, jar.cookies.get('JSESSIONID')!]) expect(logs).not.toContain(secret);
    const cookies = [res.headers['set-cookie']].flat().map(String);
    expect(cookies.find((c) => c.startsWith('JSESSIONID='))).toMatch(/HttpOnly; SameSite=Lax/);
    // The transaction cookie is cleared: the sign-in cannot be finished twice from this browser.
    expect(cookies.find((c) => c.startsWith('monctl_sso_'))).toMatch(/Max-Age=0/);
    expect(await me(d, jar)).toMatchObject({ username: 'alice@example.com', via: 'session', login: 'sso', sso: true, role: 'ADMIN' });

    const csrf = await csrfOfSession(d, jar);
    const write = await sendJson(d.url, 'POST', '/admin/api/api-keys', { name: 'made-by-sso' }, { ...jar.header(), 'x-csrf-token': csrf });
    expect(write.status, write.text).toBe(200);
    const forged = await sendJson(d.url, 'POST', '/admin/api/api-keys', { name: 'no-token' }, jar.header());
    expect(expectProblem(forged, 403).type).toBe('urn:monctl:problem:csrf');

    const listed = await d.admin.call(operations.listUsers, {});
    expect(listed.find((u) => u.username === 'alice@example.com')).toMatchObject({ role: 'ADMIN', sso: true, lastLoginMethod: 'sso' });
  });

  it('bob, whose groups map to nothing, gets the default role USER', async () => {
    const { res, jar } = await signIn(d, 'bob');
    expect(res.status, res.text).toBe(302);
    expect(await me(d, jar)).toMatchObject({ username: 'bob@example.com', login: 'sso', role: 'USER' });
  });

  it('re-evaluates the role at each login: bob joins monctl-admins and is ADMIN at his next sign-in, and leaves it', async () => {
    const before = (await d.admin.call(operations.listUsers, {})).filter((u) => u.username === 'bob@example.com');
    const bob = users.find((u) => u.login === 'bob')!;
    bob.groups = ['ops', 'monctl-admins'];
    let admin: CookieJar;
    try {
      const { res, jar } = await signIn(d, 'bob');
      expect(res.status, res.text).toBe(302);
      expect(await me(d, jar)).toMatchObject({ username: 'bob@example.com', role: 'ADMIN' });
      admin = jar;
    } finally {
      bob.groups = ['ops'];
    }
    const after = (await d.admin.call(operations.listUsers, {})).filter((u) => u.username === 'bob@example.com');
    expect(after.map((u) => u.id)).toEqual(before.map((u) => u.id));
    // An ADMIN stream of the first session ends when the next sign-in demotes bob.
    const stream = await openStream(d.url, '/admin/sse/topology', admin.header());
    expect(stream.status).toBe(200);
    const { jar } = await signIn(d, 'bob');
    expect((await me(d, jar)).role).toBe('USER');
    await stream.ended;
    expect((await send(d.url, 'GET', '/admin/sse/topology', { headers: admin.header() })).status).toBe(403);
  });

  it('a user made by single sign-on has no password: the password login fails as for a wrong one', async () => {
    for (const password of ['', 'anything-at-all']) {
      const jar = new CookieJar();
      const page = await send(d.url, 'GET', '/login');
      jar.store(page);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
      const res = await send(d.url, 'POST', '/login', {
        headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'alice@example.com', password, _csrf: csrf }).toString(),
      });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/login?error');
    }
  });

  it("the redirect URI is --public-url's when set (its cookie then Secure), else the origin the request came to", async () => {
    const behind = await send(proxied.url, 'GET', '/login/sso');
    expect(behind.status, behind.text).toBe(302);
    expect(new URL(String(behind.headers.location)).searchParams.get('redirect_uri')).toBe(
      'https://monctl.example.test/login/sso/callback',
    );
    const cookie = String([behind.headers['set-cookie']].flat()[0]);
    expect(cookie).toMatch(/^monctl_sso_[\w-]{16}=v1:/);
    expect(cookie).toMatch(/; Path=\/login\/sso\/callback; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/);

    const direct = await send(d.url, 'GET', '/login/sso', { headers: { host: 'LocalHost:8123' } });
    expect(new URL(String(direct.headers.location)).searchParams.get('redirect_uri')).toBe('http://localhost:8123/login/sso/callback');
    expect(String([direct.headers['set-cookie']].flat()[0])).not.toMatch(/Secure/);
    for (const host of ['evil.test/path', 'a b', 'evil.test@127.0.0.1', `${'a'.repeat(70)}.test`]) {
      const bad = await send(d.url, 'GET', '/login/sso', { headers: { host } });
      expect(expectProblem(bad, 400).errors, host).toEqual([{ field: 'Host', message: expect.any(String) }]);
    }
  });

  describe('attacks, each refused with a 4xx', () => {
    const code = (res: WireResponse, status: number) => expectProblem(res, status, CALLBACK).type.replace('urn:monctl:problem:', '');

    it('a callback with a wrong state: no sign-in under way for it, or one whose state differs', async () => {
      const { jar, callback } = await beginAt(d, 'alice');
      const url = new URL(callback, d.url);
      const state = url.searchParams.get('state')!;
      url.searchParams.set('state', 'x'.repeat(state.length));
      expect(code(await send(d.url, 'GET', url.pathname + url.search, { headers: jar.header() }), 400)).toBe('sso-transaction');
      // Same cookie name (its first 16 characters), another state.
      url.searchParams.set('state', `${state.slice(0, 16)}${'x'.repeat(state.length - 16)}`);
      expect(code(await send(d.url, 'GET', url.pathname + url.search, { headers: jar.header() }), 400)).toBe('sso-state');
    });

    it('a replayed callback: the cleared cookie refuses it, and with the copied cookie the provider refuses the used code', async () => {
      const { res, jar, txJar, callback } = await signIn(d, 'bob');
      expect(res.status, res.text).toBe(302);
      const again = await send(d.url, 'GET', callback, { headers: jar.header() });
      expect(code(again, 400)).toBe('sso-transaction');
      const replay = await send(d.url, 'GET', callback, { headers: txJar.header() });
      expect(code(replay, 400)).toBe('sso-code');
    });

    it('no transaction cookie at all', async () => {
      const { callback } = await beginAt(d, 'alice');
      expect(code(await send(d.url, 'GET', callback), 400)).toBe('sso-transaction');
    });

    const now = () => Math.floor(Date.now() / 1000);
    for (const [name, why, tamper] of [
      [
        'a mismatched nonce',
        /"nonce" claim/,
        (c: Record<string, unknown>) => ({ claims: { ...c, nonce: 'not-the-nonce-of-this-sign-in' } }),
      ],
      [
        'an ID token signed by another key',
        /signature verification failed/,
        (c: Record<string, unknown>) => ({ claims: c, key: 'foreign' as const }),
      ],
      ['an expired ID token', /"exp"/, (c: Record<string, unknown>) => ({ claims: { ...c, iat: now() - 7200, exp: now() - 3600 } })],
    ] as const) {
      it(name, async () => {
        const { jar, callback } = await beginAt(d, 'alice');
        provider.tamper(tamper);
        try {
          const res = await send(d.url, 'GET', callback, { headers: jar.header() });
          const problem = expectProblem(res, 400, CALLBACK);
          expect(problem.type).toBe('urn:monctl:problem:sso-id-token');
          expect(problem.detail).toMatch(why);
          await until(() => d.logs.some((l) => l.msg === 'sso refused' && l.code === 'sso-id-token' && why.test(String(l.reason))));
          expect([res.headers['set-cookie']].flat().some((c) => String(c).startsWith('JSESSIONID='))).toBe(false);
        } finally {
          provider.tamper(undefined);
        }
      });
    }

    it('an open redirect through return: other origins end at /api, a path of this origin is kept', async () => {
      const dotted = ['/.//evil.test', '/a/..//evil.test', '/%2e//evil.test']; // resolve to //evil.test
      for (const evil of [
        'https://evil.test',
        '//evil.test',
        '/\\evil.test',
        '/\t/evil.test',
        'javascript:alert(1)',
        'evil.test',
        ...dotted,
      ]) {
        const { res } = await signIn(d, 'bob', evil);
        expect(res.status, `${evil}: ${res.text}`).toBe(302);
        expect(res.headers.location, evil).toBe('/api');
      }
      const { res } = await signIn(d, 'bob', '/api/me?x=%0d%0a');
      expect(res.headers.location).toBe('/api/me?x=%0d%0a');
    });

    it('a refusal by the provider (access_denied) is a 403; a browser sees the login page with the reason', async () => {
      const jar = new CookieJar();
      const begin = await send(d.url, 'GET', '/login/sso');
      jar.store(begin);
      const state = new URL(String(begin.headers.location)).searchParams.get('state')!;
      const path = `${CALLBACK}?error=access_denied&error_description=${encodeURIComponent('<b>no</b>')}&state=${state}`;
      const res = await send(d.url, 'GET', path, { headers: { ...jar.header(), accept: 'text/html' } });
      expect(res.status).toBe(403);
      expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
      expect(res.text).toContain('Single sign-on failed: the provider refused the sign-in: &lt;b&gt;no&lt;/b&gt;');
      expect(res.text).toContain('href="/login/sso"');
      expect([res.headers['set-cookie']].flat().find((c) => String(c).startsWith('monctl_sso_'))).toMatch(/Max-Age=0/);
    });
  });

  describe('--oidc-users existing, --oidc-default-role none, --password-login off', () => {
    it('the page has the single sign-on link and no form; POST /login is 403', async () => {
      const page = await send(strict.url, 'GET', '/login');
      expect(page.text).toContain('href="/login/sso"');
      expect(page.text).not.toContain('<form');
      const post = await send(strict.url, 'POST', '/login', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'username=admin&password=x&_csrf=x',
      });
      expect(expectProblem(post, 403).type).toBe('urn:monctl:problem:password-login-off');
    });

    it('an unknown user gets 403; a user created beforehand under the same username is linked and signs in', async () => {
      const unknown = await signIn(strict, 'bob');
      expect(expectProblem(unknown.res, 403).type).toBe('urn:monctl:problem:sso-no-user');
      await strict.admin.call(operations.createUser, {
        body: { username: 'alice@example.com', password: 'alice-password-1', role: 'USER' },
      });
      const { res, jar } = await signIn(strict, 'alice');
      expect(res.status, res.text).toBe(302);
      expect(await me(strict, jar)).toMatchObject({ username: 'alice@example.com', login: 'sso', sso: true, role: 'ADMIN' });
    });

    it('eve, whose groups map to no role, is refused with 403', async () => {
      const { res } = await signIn(strict, 'eve');
      expect(expectProblem(res, 403).type).toBe('urn:monctl:problem:sso-no-role');
    });
  });

  it('a provider that is down: /login/sso is 503 sso-unavailable with Retry-After, and the daemon keeps serving', async () => {
    const res = await send(down.url, 'GET', '/login/sso');
    expect(expectProblem(res, 503).type).toBe('urn:monctl:problem:sso-unavailable');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    const page = await send(down.url, 'GET', '/login/sso', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(page.text).toContain('Single sign-on failed: the OpenID provider');
    expect((await send(down.url, 'GET', '/login')).status).toBe(200);
    expect((await send(down.url, 'GET', '/api/me', { headers: { authorization: `Bearer ${down.adminKey}` } })).status).toBe(200);
  });

  it('without --oidc-issuer there is no single sign-on: 404, and no link on the page', async () => {
    expectProblem(await send(plain.url, 'GET', '/login/sso'), 404);
    expectProblem(await send(plain.url, 'GET', `${CALLBACK}?state=x&code=y`), 404);
    const page = await send(plain.url, 'GET', '/login');
    expect(page.text).not.toContain('/login/sso');
    expect(page.text).toContain('<form method="post" action="/login">');
  });
});
