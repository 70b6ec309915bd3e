import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { CookieJar, csrfOf, expectProblem, login, send } from '../helpers/http.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('session login over real HTTP', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });

  /** A fresh visitor: the login page's cookie jar and CSRF token. */
  async function visit() {
    const jar = new CookieJar();
    const page = await send(d.url, 'GET', '/login');
    jar.store(page);
    return { jar, page, csrf: csrfOf(page.text) };
  }

  it('GET /login renders a form with _csrf and sets an HttpOnly, SameSite=Lax JSESSIONID', async () => {
    const { page, jar, csrf } = await visit();
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toMatch(/^text\/html/);
    expect(page.text).toMatch(/<form[^>]*method="post"[^>]*action="\/login"/);
    expect(page.text).toMatch(/name="username"/);
    expect(page.text).toMatch(/name="password"/);
    expect(csrf.length).toBeGreaterThanOrEqual(16);
    expect(page.text).toMatch(/<input type="hidden" name="_csrf" value="[^"]+">/);
    const cookie = [page.headers['set-cookie']].flat().find((c) => c?.startsWith('JSESSIONID='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    expect(cookie).not.toMatch(/;\s*Secure/i); // plain HTTP: a Secure cookie would never come back
    expect(jar.cookies.get('JSESSIONID')).toBeTruthy();
  });

  it('a wrong password redirects to /login?error', async () => {
    const { jar, csrf } = await visit();
    const res = await send(d.url, 'POST', '/login', {
      headers: { ...jar.header(), ...FORM },
      body: form({ username: 'admin', password: 'not-the-password', _csrf: csrf }),
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/login?error');
    const again = await send(d.url, 'GET', '/login?error', { headers: jar.header() });
    expect(again.text).toMatch(/Invalid username or password/);
  });

  it('a missing or wrong _csrf gets 403 problem+json', async () => {
    const { jar, csrf } = await visit();
    const missing = await send(d.url, 'POST', '/login', {
      headers: { ...jar.header(), ...FORM },
      body: form({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    expectProblem(missing, 403, '/login');
    const wrong = await send(d.url, 'POST', '/login', {
      headers: { ...jar.header(), ...FORM },
      body: form({ username: 'admin', password: ADMIN_PASSWORD, _csrf: `${csrf.slice(0, -2)}xx` }),
    });
    expectProblem(wrong, 403);
    // Someone else's token does not fit this cookie.
    const other = await visit();
    const foreign = await send(d.url, 'POST', '/login', {
      headers: { ...jar.header(), ...FORM },
      body: form({ username: 'admin', password: ADMIN_PASSWORD, _csrf: other.csrf }),
    });
    expectProblem(foreign, 403);
    // No cookie at all.
    const noCookie = await send(d.url, 'POST', '/login', {
      headers: FORM,
      body: form({ username: 'admin', password: ADMIN_PASSWORD, _csrf: csrf }),
    });
    expectProblem(noCookie, 403);
  });

  it('a correct login issues a new session id; the session and its CSRF token work until logout', async () => {
    const { jar, csrf } = await visit();
    const before = jar.cookies.get('JSESSIONID');
    const res = await send(d.url, 'POST', '/login', {
      headers: { ...jar.header(), ...FORM },
      body: form({ username: 'admin', password: ADMIN_PASSWORD, _csrf: csrf }),
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/api');
    jar.store(res);
    const after = jar.cookies.get('JSESSIONID');
    expect(after).toBeTruthy();
    expect(after).not.toBe(before);
    expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly/i);

    const me = await send(d.url, 'GET', '/api/me', { headers: jar.header() });
    expect(me.status).toBe(200);
    expect(me.json()).toEqual({
      username: 'admin',
      role: 'ADMIN',
      via: 'session',
      keyId: null,
      login: 'password',
      twoFactor: false,
      sso: false,
    });

    // The pre-login cookie is not a session.
    const stale = await send(d.url, 'GET', '/api/me', { headers: { cookie: `JSESSIONID=${before}` } });
    expectProblem(stale, 401);

    const body = JSON.stringify({ username: 'carol', password: 'carol-password-1', role: 'USER' });
    const json = { ...jar.header(), 'content-type': 'application/json' };
    const noToken = await send(d.url, 'POST', '/admin/api/users', { headers: json, body });
    expectProblem(noToken, 403);
    const badToken = await send(d.url, 'POST', '/admin/api/users', { headers: { ...json, 'x-csrf-token': 'nope' }, body });
    expectProblem(badToken, 403);
    const created = await send(d.url, 'POST', '/admin/api/users', { headers: { ...json, 'x-csrf-token': csrf }, body });
    expect(created.status, created.text).toBe(200);
    expect(created.json()).toMatchObject({ username: 'carol', role: 'USER' });
    // Safe methods need no token.
    const list = await send(d.url, 'GET', '/admin/api/users', { headers: jar.header() });
    expect(list.status).toBe(200);

    // The explorer page carries the session's token for "Try it out".
    const explorer = await send(d.url, 'GET', '/api', { headers: jar.header() });
    expect(explorer.text).toContain(JSON.stringify(csrf));

    const noCsrfLogout = await send(d.url, 'POST', '/logout', { headers: jar.header() });
    expectProblem(noCsrfLogout, 403);
    const logout = await send(d.url, 'POST', '/logout', { headers: { ...jar.header(), 'x-csrf-token': csrf } });
    expect(logout.status).toBe(302);
    const sessionCookie = jar.header();
    jar.store(logout);
    expect(jar.cookies.has('JSESSIONID')).toBe(false);
    // The old cookie, replayed, is dead.
    const gone = await send(d.url, 'GET', '/api/me', { headers: sessionCookie });
    const problem = expectProblem(gone, 401);
    expect(problem.type).toMatch(/unauthorized/);
    expect(gone.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('logging in again from a live session replaces it', async () => {
    const first = await login(d.url, 'admin', ADMIN_PASSWORD);
    const oldCookie = first.jar.header();
    const res = await send(d.url, 'POST', '/login', {
      headers: { ...oldCookie, ...FORM },
      body: form({ username: 'admin', password: ADMIN_PASSWORD, _csrf: first.csrf }),
    });
    expect(res.headers.location).toBe('/api');
    first.jar.store(res);
    expect(first.jar.header()).not.toEqual(oldCookie);
    expect((await send(d.url, 'GET', '/api/me', { headers: first.jar.header() })).status).toBe(200);
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: oldCookie }), 401);
  });

  it('logout with the form field _csrf works too', async () => {
    const { jar, csrf } = await login(d.url, 'admin', ADMIN_PASSWORD);
    const logout = await send(d.url, 'POST', '/logout', { headers: { ...jar.header(), ...FORM }, body: form({ _csrf: csrf }) });
    expect(logout.status).toBe(302);
    const gone = await send(d.url, 'GET', '/api/me', { headers: jar.header() });
    expectProblem(gone, 401);
  });

  it('throttles one username after 5 failures with 429 and Retry-After; other usernames are unaffected', async () => {
    const user = 'throttled-user';
    const attempt = async (username: string, password = 'wrong-password-x') => {
      const { jar, csrf } = await visit();
      return send(d.url, 'POST', '/login', { headers: { ...jar.header(), ...FORM }, body: form({ username, password, _csrf: csrf }) });
    };
    for (let i = 0; i < 5; i++) {
      const res = await attempt(user);
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/login?error');
    }
    const blocked = await attempt(user);
    expectProblem(blocked, 429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Case does not dodge the throttle.
    expectProblem(await attempt(user.toUpperCase()), 429);
    const other = await attempt('someone-else');
    expect(other.status).toBe(302);
    expect(other.headers.location).toBe('/login?error');
    const admin = await attempt('admin', ADMIN_PASSWORD);
    expect(admin.headers.location).toBe('/api');
  });
});
