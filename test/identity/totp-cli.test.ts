import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRunner, runMonctl, tempHome } from '../cli/run.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { login, okJson, send, sendJson } from '../helpers/http.ts';
import { startOidcProvider } from '../helpers/oidc-provider.ts';

const PASSWORD = 'a-long-password-1';
const codeAt = (secret: string, step: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: step * 30_000 });

/** A step with at least 10 s left: the codes computed around it stay in the daemon's ±1 window meanwhile. */
async function stepWithRoom(ms = 10_000): Promise<number> {
  const left = TOTP.remaining({ period: 30, timestamp: Date.now() });
  if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
  return TOTP.counter({ period: 30, timestamp: Date.now() });
}

/**
 * `monctl` with stdin kept open, as a person at a pipe: the test reads what it printed (a
 * secret), then writes the next line (that secret's code).
 */
function converse(args: string[], env: Record<string, string>) {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MONCTL_|XDG_|NO_COLOR)/.test(k)) base[k] = v;
  const child = spawn(join(ROOT, 'bin/monctl'), args, { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const changed = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', (c) => {
    out.stdout += c;
    changed();
  });
  child.stderr.on('data', (c) => {
    out.stderr += c;
    changed();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    out,
    exited,
    /** Resolves with the first match of `pattern` in stdout + stderr, once it was printed. */
    async waitFor(pattern: RegExp): Promise<RegExpExecArray> {
      for (;;) {
        const found = pattern.exec(out.stdout + out.stderr);
        if (found) return found;
        const next = new Promise<void>((resolve) => waiters.push(resolve));
        if ((await Promise.race([next.then(() => false), exited.then(() => true)])) && !pattern.exec(out.stdout + out.stderr))
          throw new Error(`exited without printing ${pattern}:\n${out.stdout}\n${out.stderr}`);
      }
    },
    line: (text: string) => child.stdin.write(`${text}\n`),
    end: () => child.stdin.end(),
  };
}

describe('monctl and the second factor: login with a code, users columns, reset-2fa, two-factor enable', () => {
  let d: TestDaemon;
  const home = tempHome();
  let monctl: ReturnType<typeof adminRunner>;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--two-factor-required', 'admin'] });
    monctl = adminRunner(d, home.dir);
    for (const [username, role] of [
      ['carol', 'USER'],
      ['ada', 'ADMIN'],
      ['otto', 'ADMIN'],
    ])
      await okJson(d.url, 'POST', '/admin/api/users', { username, password: PASSWORD, role }, { authorization: `Bearer ${d.adminKey}` });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    home.cleanup();
  });

  /** Enrols carol through the API from her password session. */
  async function enrolCarol(step: number): Promise<string> {
    const s = await login(d.url, 'carol', PASSWORD);
    const headers = { ...s.jar.header(), 'x-csrf-token': s.csrf };
    const { secret } = (await sendJson(d.url, 'POST', '/api/me/two-factor', undefined, headers)).json();
    const confirmed = await sendJson(d.url, 'POST', '/api/me/two-factor/confirm', { code: codeAt(secret, step) }, headers);
    expect(confirmed.status, confirmed.text).toBe(200);
    return secret;
  }

  /** Enrols an ADMIN the way --two-factor-required admin makes it: at the password login, in the page's form. */
  async function enrolAtLogin(username: string, step: number): Promise<string> {
    const s = await login(d.url, username, PASSWORD);
    expect(s.res.headers.location).toBe('/login/2fa');
    const page = await send(d.url, 'GET', '/login/2fa', { headers: s.jar.header() });
    const secret = /<code>([A-Z2-7]+)<\/code>/.exec(page.text)![1];
    const done = await send(d.url, 'POST', '/login/2fa', {
      headers: { ...s.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code: codeAt(secret, step), _csrf: s.csrf }).toString(),
    });
    expect(done.status).toBe(200);
    return secret;
  }

  /** `monctl` as a user without an API key: its own config dir, the server only. */
  const asUser = (args: string[], input: string, dir: string) =>
    runMonctl(args, {
      input,
      env: { MONCTL_SERVER: d.url, MONCTL_CONFIG_DIR: join(home.dir, dir), XDG_DATA_HOME: join(home.dir, 'nodata') },
    });

  it('monctl login --username reads the password then the code from stdin; a wrong code fails clearly', { timeout: 60_000 }, async () => {
    const step = await stepWithRoom(15_000);
    await enrolCarol(step);
    // `login --username` creates an API key, which takes an ADMIN.
    const secret = await enrolAtLogin('otto', step);
    const wrong = await asUser(['login', '--username', 'otto'], `${PASSWORD}\n${codeAt(secret, step + 4)}\n`, 'otto-wrong');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/wrong or used authentication code/);
    const missing = await asUser(['login', '--username', 'otto'], `${PASSWORD}\n`, 'otto-missing');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Authentication code expected on stdin/);

    const ok = await asUser(['login', '--username', 'otto'], `${PASSWORD}\n${codeAt(secret, step + 1)}\n`, 'otto');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Logged in to .* as otto \(ADMIN\)/);
    // The context's key works without a code: API keys are unaffected.
    const status = await asUser(['two-factor', 'status', '-o', 'json'], '', 'otto');
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toMatchObject({ enabled: true, recoveryCodesLeft: 10, required: true });
  });

  it('monctl users shows 2FA and SSO (wide: the last login method); reset-2fa turns it off', { timeout: 60_000 }, async () => {
    const list = await monctl(['users', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const [head, ...rows] = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(head).toEqual(['ID', 'USERNAME', 'ROLE', '2FA', 'SSO', 'CREATED']);
    const carol = rows.find((r) => r[1] === 'carol')!;
    expect(carol.slice(1, 5)).toEqual(['carol', 'USER', 'yes', 'no']);
    expect(rows.find((r) => r[1] === 'ada')?.slice(3, 5)).toEqual(['no', 'no']);
    const wide = await monctl(['users', 'list', '-o', 'wide']);
    const [wideHead, ...wideRows] = wide.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(wideHead).toContain('LAST LOGIN');
    const lastLogin = (name: string) => wideRows.find((r) => r[1] === name)?.[wideHead.indexOf('LAST LOGIN')];
    expect(lastLogin('carol')).toBe('password');
    expect(lastLogin('otto')).toBe('password+totp');
    expect(lastLogin('ada')).toBe('-');

    const refused = await monctl(['users', 'reset-2fa', 'carol']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/without --yes/);
    const reset = await monctl(['users', 'reset-2fa', 'carol', '--yes']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/Reset the second factor of user carol/);
    const after = (await monctl(['users', 'list', '-o', 'json'])).json();
    expect(after.find((u: { username: string }) => u.username === 'carol').twoFactor).toBe(false);
    expect((await login(d.url, 'carol', PASSWORD)).res.headers.location).toBe('/api');
  });

  it('monctl two-factor enable: QR code and secret printed, the code read from stdin, the recovery codes printed', {
    timeout: 60_000,
  }, async () => {
    const step = await stepWithRoom(15_000);
    const run = converse(['two-factor', 'enable'], { MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: home.dir });
    const secret = (await run.waitFor(/Secret: ([A-Z2-7]+)\n/))[1];
    expect(run.out.stdout).toMatch(/[▀▄█]/); // the QR code, in block characters
    run.line(codeAt(secret, step));
    run.end();
    expect(await run.exited, run.out.stderr).toBe(0);
    const codes = run.out.stdout.split('\n').filter((l) => /^[a-z2-9]{5}-[a-z2-9]{5}$/.test(l));
    expect(codes).toHaveLength(10);
    const status = await monctl(['two-factor', 'status', '-o', 'json']);
    expect(status.json()).toMatchObject({ enabled: true, recoveryCodesLeft: 10, required: true });

    // New recovery codes, with a recovery code; then off, with a current code.
    const renewed = await monctl(['two-factor', 'recovery-codes'], { input: `${codes[0]}\n` });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(renewed.stdout.trim().split('\n')).toHaveLength(10);
    const wrong = await monctl(['two-factor', 'disable'], { input: `${codes[1]}\n` }); // the old set is gone
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/code: is not a current code/);
    const off = await monctl(['two-factor', 'disable'], { input: `${codeAt(secret, step + 1)}\n` });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/Two-factor login is off/);
  });

  it('monctl login --username enrols where the daemon requires it: QR and secret on stderr, the code on the next line', {
    timeout: 60_000,
  }, async () => {
    const step = await stepWithRoom(15_000);
    const run = converse(['login', '--username', 'ada'], {
      MONCTL_SERVER: d.url,
      MONCTL_CONFIG_DIR: join(home.dir, 'ada'),
      XDG_DATA_HOME: join(home.dir, 'nodata'),
    });
    run.line(PASSWORD);
    const secret = (await run.waitFor(/Secret: ([A-Z2-7]+)\n/))[1];
    expect(run.out.stderr).toMatch(/requires a second factor for ada/);
    run.line(codeAt(secret, step));
    run.end();
    expect(await run.exited, run.out.stderr).toBe(0);
    expect(run.out.stdout).toMatch(/Logged in to .* as ada \(ADMIN\)/);
    expect(run.out.stdout.split('\n').filter((l) => /^[a-z2-9]{5}-[a-z2-9]{5}$/.test(l))).toHaveLength(10);
    const users = (await monctl(['users', 'list', '-o', 'json'])).json();
    expect(users.find((u: { username: string }) => u.username === 'ada')).toMatchObject({
      twoFactor: true,
      lastLoginMethod: 'password+totp',
    });
  });
});

describe('monctl login --username where password login is off', () => {
  it('says so, and points at single sign-on', { timeout: 90_000 }, async () => {
    const provider = await startOidcProvider();
    const home = tempHome();
    const d = await startDaemon({
      args: ['--oidc-issuer', provider.issuer, '--oidc-client-id', provider.client.clientId, '--password-login', 'off'],
      env: { MONCTL_OIDC_CLIENT_SECRET: provider.client.clientSecret },
    });
    try {
      const run = await runMonctl(['login', '--username', 'admin'], {
        input: `${PASSWORD}\n`,
        env: { MONCTL_SERVER: d.url, MONCTL_CONFIG_DIR: home.dir, XDG_DATA_HOME: join(home.dir, 'nodata') },
      });
      expect(run.code).toBe(4);
      expect(run.stderr).toMatch(/password login turned off: log in with single sign-on \(monctl login --sso\)/);
    } finally {
      await d.stop();
      await provider.stop();
      home.cleanup();
    }
  });
});
