import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { databaseBytes, queryDb } from '../helpers/test-database.ts';
import { bearer, CookieJar, csrfOf, expectProblem, fieldsOf, login, okJson, send, sendJson, type WireResponse } from '../helpers/http.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PASSWORD = 'a-long-password-1';
const PENDING = 'monctl_login_2fa';

/** The code of `secret` `offset` 30 s steps from now, computed here as an authenticator app would. */
const codeAt = (secret: string, step: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: step * 30_000 });
const stepNow = () => TOTP.counter({ period: 30, timestamp: Date.now() });

/**
 * A step with at least `ms` left in it: the codes a test computes for steps around it stay inside
 * the daemon's ±1 window while the test runs (the daemon shares this host's clock).
 */
async function stepWithRoom(ms = 10_000): Promise<number> {
  const left = TOTP.remaining({ period: 30, timestamp: Date.now() });
  if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
  return stepNow();
}

describe('TOTP second factor: enrolment, login, replay, throttle, recovery codes, reset', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--two-factor-required', 'admin'] });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  const admin = () => ({ ...bearer(d.adminKey) });
  async function createUser(username: string, role: 'ADMIN' | 'USER' = 'USER'): Promise<number> {
    return (await okJson(d.url, 'POST', '/admin/api/users', { username, password: PASSWORD, role }, admin())).id;
  }
  const usersList = async () => (await okJson(d.url, 'GET', '/admin/api/users', undefined, admin())) as Array<Record<string, unknown>>;

  /** A session's JSON call, with its CSRF token. */
  const call = (s: { jar: CookieJar; csrf: string }, method: string, path: string, body?: unknown) =>
    sendJson(d.url, method, path, body, { ...s.jar.header(), 'x-csrf-token': s.csrf });

  /** Posts the second step's form with this jar. */
  async function postCode(jar: CookieJar, csrf: string, code: string): Promise<WireResponse> {
    const res = await send(d.url, 'POST', '/login/2fa', {
      headers: { ...jar.header(), ...FORM },
      body: new URLSearchParams({ code, _csrf: csrf }).toString(),
    });
    jar.store(res);
    return res;
  }

  /** Password login, then the code: the finished session (or the last answer). */
  async function loginWithCode(username: string, code: string) {
    const first = await login(d.url, username, PASSWORD);
    expect(first.res.headers.location).toBe('/login/2fa');
    const res = await postCode(first.jar, first.csrf, code);
    return { ...first, res };
  }

  /** Enrols `username` through the API from a password session; the secret and recovery codes. */
  async function enrol(username: string, step: number) {
    const s = await login(d.url, username, PASSWORD);
    expect(s.res.headers.location).toBe('/api');
    const started = await call(s, 'POST', '/api/me/two-factor');
    expect(started.status, started.text).toBe(200);
    const { secret } = started.json();
    const confirmed = await call(s, 'POST', '/api/me/two-factor/confirm', { code: codeAt(secret, step) });
    expect(confirmed.status, confirmed.text).toBe(200);
    return { secret: secret as string, recoveryCodes: confirmed.json().recoveryCodes as string[], session: s };
  }

  it('enrolment: a QR code and the secret; a wrong confirmation code is refused, the right one enables with 10 recovery codes', async () => {
    await createUser('carol');
    const s = await login(d.url, 'carol', PASSWORD);
    const started = await call(s, 'POST', '/api/me/two-factor');
    expect(started.status, started.text).toBe(200);
    const { secret, otpauthUri, qrSvg } = started.json();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUri).toMatch(/^otpauth:\/\/totp\/monctl:carol\?/);
    expect(otpauthUri).toContain(`secret=${secret}`);
    expect(qrSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    // Not enabled until confirmed: the login is unchanged.
    expect((await call(s, 'GET', '/api/me')).json().twoFactor).toBe(false);
    expect((await login(d.url, 'carol', PASSWORD)).res.headers.location).toBe('/api');

    const step = await stepWithRoom();
    const wrong = expectProblem(await call(s, 'POST', '/api/me/two-factor/confirm', { code: codeAt(secret, step + 5) }), 400);
    expect(fieldsOf(wrong)).toEqual(['code']);
    expect((await call(s, 'GET', '/api/me/two-factor')).json()).toMatchObject({ enabled: false, pending: true });
    const ok = await call(s, 'POST', '/api/me/two-factor/confirm', { code: codeAt(secret, step) });
    expect(ok.status, ok.text).toBe(200);
    const codes: string[] = ok.json().recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect((await call(s, 'GET', '/api/me')).json()).toMatchObject({ twoFactor: true, login: 'password' });
    expect((await call(s, 'GET', '/api/me/two-factor')).json()).toEqual({
      enabled: true,
      pending: false,
      required: false,
      recoveryCodesLeft: 10,
      canEnrol: true,
    });
    expect((await usersList()).find((u) => u.username === 'carol')).toMatchObject({ twoFactor: true, sso: false });
    // Enrolling again while enabled is a conflict.
    expectProblem(await call(s, 'POST', '/api/me/two-factor'), 409);
  });

  it('login asks for the code after the password, without a session before it; a reused code is refused, the next step’s is taken', async () => {
    await createUser('dora');
    const step = await stepWithRoom(12_000);
    const { secret } = await enrol('dora', step - 1);

    const first = await login(d.url, 'dora', PASSWORD);
    expect(first.res.status).toBe(302);
    expect(first.res.headers.location).toBe('/login/2fa');
    const pending = [first.res.headers['set-cookie']].flat().find((c) => c?.startsWith(`${PENDING}=`));
    expect(pending).toMatch(/HttpOnly/i);
    expect(pending).toMatch(/SameSite=Lax/i);
    expect(pending).toMatch(/Max-Age=300/);
    // The password alone opens nothing.
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: first.jar.header() }), 401);
    const page = await send(d.url, 'GET', '/login/2fa', { headers: first.jar.header() });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.text).toMatch(/<form method="post" action="\/login\/2fa">/);
    expect(csrfOf(page.text)).toBe(first.csrf);

    const done = await postCode(first.jar, first.csrf, codeAt(secret, step));
    expect(done.status).toBe(302);
    expect(done.headers.location).toBe('/api');
    const me = (await send(d.url, 'GET', '/api/me', { headers: first.jar.header() })).json();
    expect(me).toMatchObject({ username: 'dora', via: 'session', login: 'password+totp', twoFactor: true });
    expect((await usersList()).find((u) => u.username === 'dora')?.lastLoginMethod).toBe('password+totp');
    expect(first.jar.cookies.has(PENDING)).toBe(false);

    // The same code again (still inside its window) is refused, as is the older one.
    const replay = await loginWithCode('dora', codeAt(secret, step));
    expect(replay.res.headers.location).toBe('/login/2fa?error');
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: replay.jar.header() }), 401);
    const again = await send(d.url, 'GET', '/login/2fa?error', { headers: replay.jar.header() });
    expect(again.text).toMatch(/not valid/);
    expect((await postCode(replay.jar, replay.csrf, codeAt(secret, step - 1))).headers.location).toBe('/login/2fa?error');
    // The next step's code is inside the ±1 window and new.
    expect((await postCode(replay.jar, replay.csrf, codeAt(secret, step + 1))).headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: replay.jar.header() })).json().login).toBe('password+totp');
  });

  it('each recovery code works once (case and dashes aside); a CSRF-less second step is refused', async () => {
    await createUser('rita');
    const { recoveryCodes } = await enrol('rita', await stepWithRoom());
    const first = await loginWithCode('rita', recoveryCodes[0]);
    expect(first.res.headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: first.jar.header() })).json().login).toBe('password+totp');
    expect((await loginWithCode('rita', recoveryCodes[0])).res.headers.location).toBe('/login/2fa?error');
    const typed = recoveryCodes[1].toUpperCase().replace('-', ' ');
    expect((await loginWithCode('rita', typed)).res.headers.location).toBe('/api');
    expect((await loginWithCode('rita', recoveryCodes[1])).res.headers.location).toBe('/login/2fa?error');
    const status = await call(first, 'GET', '/api/me/two-factor');
    expect(status.json().recoveryCodesLeft).toBe(8);

    const noCsrf = await login(d.url, 'rita', PASSWORD);
    const res = await send(d.url, 'POST', '/login/2fa', {
      headers: { ...noCsrf.jar.header(), ...FORM },
      body: new URLSearchParams({ code: recoveryCodes[2] }).toString(),
    });
    expectProblem(res, 403);
    // Renewing the codes needs a code; the old set is gone.
    const renewed = await call(first, 'POST', '/api/me/two-factor/recovery-codes', { code: recoveryCodes[2] });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.json().recoveryCodes).toHaveLength(10);
    expect((await loginWithCode('rita', recoveryCodes[3])).res.headers.location).toBe('/login/2fa?error');
    expect((await loginWithCode('rita', renewed.json().recoveryCodes[0])).res.headers.location).toBe('/api');
  });

  it('brute force is throttled in the database: after 5 wrong codes, 429 with Retry-After even for the right code', async () => {
    await createUser('bruno');
    const step = await stepWithRoom(15_000);
    const { secret, session } = await enrol('bruno', step);
    const attempt = await login(d.url, 'bruno', PASSWORD);
    for (let i = 0; i < 5; i++) {
      const wrong = String((Number(codeAt(secret, step + 1)) + 1 + i) % 1_000_000).padStart(6, '0');
      expect((await postCode(attempt.jar, attempt.csrf, wrong)).headers.location).toBe('/login/2fa?error');
    }
    const blocked = await postCode(attempt.jar, attempt.csrf, codeAt(secret, step + 1));
    const problem = expectProblem(blocked, 429);
    expect(problem.type).toMatch(/two-factor-throttled$/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // A fresh password login does not escape it: the count is the user's, not the browser's.
    const fresh = await login(d.url, 'bruno', PASSWORD);
    expectProblem(await postCode(fresh.jar, fresh.csrf, codeAt(secret, step + 1)), 429);
    // The API's code checks share it.
    expectProblem(await call(session, 'POST', '/api/me/two-factor/recovery-codes', { code: codeAt(secret, step + 1) }), 429);

    // An admin's reset clears the factor and the count: the password alone logs in again.
    const id = (await usersList()).find((u) => u.username === 'bruno')!.id;
    const reset = await sendJson(d.url, 'DELETE', `/admin/api/users/${id}/two-factor`, undefined, admin());
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json()).toMatchObject({ username: 'bruno', twoFactor: false });
    const after = await login(d.url, 'bruno', PASSWORD);
    expect(after.res.headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: after.jar.header() })).json()).toMatchObject({
      login: 'password',
      twoFactor: false,
    });
    // The pending login from before the reset is void.
    expect((await postCode(attempt.jar, attempt.csrf, codeAt(secret, step + 1))).headers.location).toBe('/login');
    // Only ADMIN resets.
    const userSession = after;
    expectProblem(await call(userSession, 'DELETE', `/admin/api/users/${id}/two-factor`), 403);
    expectProblem(await sendJson(d.url, 'DELETE', '/admin/api/users/999999/two-factor', undefined, admin()), 404);
  });

  it('parallel guesses share no free attempt: of 12 at once, at most 5 are judged, the rest get 429', async () => {
    await createUser('petra');
    const step = await stepWithRoom();
    const { secret } = await enrol('petra', step);
    const attempt = await login(d.url, 'petra', PASSWORD);
    const wrong = String((Number(codeAt(secret, step + 1)) + 7) % 1_000_000).padStart(6, '0');
    const answers = await Promise.all(Array.from({ length: 12 }, () => postCode(attempt.jar, attempt.csrf, wrong)));
    const judged = answers.filter((r) => r.headers.location === '/login/2fa?error').length;
    expect(judged).toBeGreaterThan(0);
    expect(judged).toBeLessThanOrEqual(5);
    expect(answers.filter((r) => r.status === 429).length).toBe(12 - judged);
  });

  it('a pending login cannot be finished by another user’s code, in another browser, or forged', async () => {
    await createUser('paul');
    await createUser('quinn');
    const step = await stepWithRoom();
    const paul = await enrol('paul', step);
    const quinn = await enrol('quinn', step);
    const a = await login(d.url, 'paul', PASSWORD);
    const b = await login(d.url, 'quinn', PASSWORD);
    // Paul's pending login with Quinn's valid code: a wrong code for Paul.
    expect((await postCode(a.jar, a.csrf, codeAt(quinn.secret, step + 1))).headers.location).toBe('/login/2fa?error');
    // Quinn's pending cookie in Paul's browser (with Paul's pre-login cookie and CSRF): not this browser's login.
    const mixed = new CookieJar();
    mixed.cookies.set('JSESSIONID', a.jar.cookies.get('JSESSIONID')!);
    mixed.cookies.set(PENDING, b.jar.cookies.get(PENDING)!);
    expect((await postCode(mixed, a.csrf, codeAt(quinn.secret, step + 1))).headers.location).toBe('/login');
    expect((await postCode(mixed, b.csrf, codeAt(quinn.secret, step + 1))).headers.location).toBe('/login');
    // The pending cookie alone, without the browser's pre-login cookie.
    const alone = new CookieJar();
    alone.cookies.set(PENDING, a.jar.cookies.get(PENDING)!);
    expect((await postCode(alone, a.csrf, codeAt(paul.secret, step + 1))).headers.location).toBe('/login');
    // A tampered one.
    const forged = new CookieJar();
    const sealed = decodeURIComponent(a.jar.cookies.get(PENDING)!);
    const flipped = `${sealed.slice(0, 20)}${sealed[20] === 'A' ? 'B' : 'A'}${sealed.slice(21)}`;
    forged.cookies.set('JSESSIONID', a.jar.cookies.get('JSESSIONID')!);
    forged.cookies.set(PENDING, encodeURIComponent(flipped));
    expect((await postCode(forged, a.csrf, codeAt(paul.secret, step + 1))).headers.location).toBe('/login');
    // None of these logged anyone in; each finishes in its own browser.
    expect((await postCode(b.jar, b.csrf, codeAt(quinn.secret, step + 1))).headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: b.jar.header() })).json().username).toBe('quinn');
    expect((await postCode(a.jar, a.csrf, codeAt(paul.secret, step + 1))).headers.location).toBe('/api');
    expect((await send(d.url, 'GET', '/api/me', { headers: a.jar.header() })).json().username).toBe('paul');
  });

  it('--two-factor-required admin: an ADMIN without a factor enrols at login (QR inline, recovery codes once); a USER goes straight in', async () => {
    await createUser('erin', 'ADMIN');
    await createUser('frank');
    expect((await login(d.url, 'frank', PASSWORD)).res.headers.location).toBe('/api');

    const first = await login(d.url, 'erin', PASSWORD);
    expect(first.res.headers.location).toBe('/login/2fa');
    expectProblem(await send(d.url, 'GET', '/api/me', { headers: first.jar.header() }), 401);
    const page = await send(d.url, 'GET', '/login/2fa', { headers: first.jar.header() });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.headers['content-security-policy']).not.toMatch(/script-src/);
    expect(page.text).toMatch(/<div class="qr"><svg[^>]*>[\s\S]*<\/svg>/);
    expect(page.text).not.toMatch(/<script/);
    const secret = /<code>([A-Z2-7]+)<\/code>/.exec(page.text)?.[1];
    expect(secret).toBeDefined();
    // The same pending login shows the same secret (it lives in the sealed cookie, not in a row).
    expect((await send(d.url, 'GET', '/login/2fa', { headers: first.jar.header() })).text).toContain(secret);

    const step = await stepWithRoom();
    expect((await postCode(first.jar, first.csrf, codeAt(secret!, step + 3))).headers.location).toBe('/login/2fa?error');
    const done = await postCode(first.jar, first.csrf, codeAt(secret!, step));
    expect(done.status).toBe(200);
    const codes = [...done.text.matchAll(/<li>([a-z2-9-]+)<\/li>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    const me = (await send(d.url, 'GET', '/api/me', { headers: first.jar.header() })).json();
    expect(me).toMatchObject({ username: 'erin', role: 'ADMIN', login: 'password+totp', twoFactor: true });
    // From now on Erin's login asks for the code.
    expect((await loginWithCode('erin', codes[0])).res.headers.location).toBe('/api');

    // API keys are unaffected: a key Erin creates works without any code, and the bootstrap ADMIN key still does.
    const key = await call(first, 'POST', '/admin/api/api-keys', { name: 'erin-ci', role: 'ADMIN' });
    expect(key.status, key.text).toBe(200);
    const viaKey = (await send(d.url, 'GET', '/api/me', { headers: bearer(key.json().token) })).json();
    expect(viaKey).toMatchObject({ username: 'erin', via: 'api-key', login: null, twoFactor: true });
    expect((await send(d.url, 'GET', '/api/me', { headers: admin() })).status).toBe(200);
    expect((await usersList()).find((u) => u.username === 'admin')?.twoFactor).toBe(false);
  });

  it('at rest: the secret is sealed and the recovery codes hashed; a user of single sign-on cannot enrol (400)', async () => {
    await createUser('vera');
    const { secret, recoveryCodes } = await enrol('vera', await stepWithRoom());
    const bytes = (await databaseBytes(d)).toString('latin1');
    expect(bytes).not.toContain(secret);
    for (const code of recoveryCodes) expect(bytes).not.toContain(code);
    const [row] = await queryDb<{ totp_secret: string }>(d, "SELECT totp_secret FROM users WHERE username = 'vera'");
    expect(row.totp_secret).toMatch(/^v1:/);

    // An SSO user has no password (migration 0028): made here from a user with a live session.
    await createUser('sam');
    const sam = await login(d.url, 'sam', PASSWORD);
    expect(sam.res.headers.location).toBe('/api');
    await queryDb(
      d,
      "UPDATE users SET password_hash = '', sso_issuer = 'https://idp.example', sso_subject = 'sam-1' WHERE username = 'sam'",
    );
    expect(fieldsOf(expectProblem(await call(sam, 'POST', '/api/me/two-factor'), 400))).toEqual(['user']);
    expect((await call(sam, 'GET', '/api/me/two-factor')).json()).toMatchObject({ canEnrol: false, required: false, enabled: false });
  });

  it('turning the factor off needs a code; a wrong one is 400 naming code', async () => {
    await createUser('tess');
    const step = await stepWithRoom();
    const { secret, session } = await enrol('tess', step);
    expect(fieldsOf(expectProblem(await call(session, 'DELETE', '/api/me/two-factor', { code: '000000' }), 400))).toEqual(['code']);
    expectProblem(await call(session, 'DELETE', '/api/me/two-factor', {}), 400);
    const off = await call(session, 'DELETE', '/api/me/two-factor', { code: codeAt(secret, step + 1) });
    expect(off.status, off.text).toBe(200);
    expect(off.json()).toMatchObject({ enabled: false, recoveryCodesLeft: 0 });
    expect((await login(d.url, 'tess', PASSWORD)).res.headers.location).toBe('/api');
    expectProblem(await call(session, 'DELETE', '/api/me/two-factor', { code: codeAt(secret, step + 1) }), 409);
  });
});
