import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRunner, tempHome } from '../cli/run.ts';
import { ROOT } from '../helpers/daemon.ts';
import { edge, startTarget, startTunnel, type Tunnel } from './helpers.ts';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** `monctl routes add|update` with the access flags, and `monctl keys create --route`, against a real edge. */
describe('monctl routes: access control flags', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let home: ReturnType<typeof tempHome>;
  let monctl: ReturnType<typeof adminRunner>;

  beforeAll(async () => {
    target = await startTarget((req, res) => res.end(`hello ${req.url}`));
    tunnel = await startTunnel();
    home = tempHome();
    monctl = adminRunner(tunnel.daemon, home.dir);
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
    home?.cleanup();
  });

  it('adds a route with basic auth (password from stdin), an allow list, a rate limit and an HTTPS redirect', async () => {
    const add = await monctl(
      [
        'routes',
        'add',
        'web',
        '--agent',
        String(tunnel.agentId),
        '--target',
        target.url,
        '--hostname',
        'web.test',
        '--basic-auth',
        'alice',
        '--ip-allow',
        '10.0.0.0/8,127.0.0.1',
        '--ip-deny',
        '10.9.0.0/16',
        '--rate-limit',
        '50:100',
        '-o',
        'json',
      ],
      { input: 'alice-password\n' },
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({
      auth: 'basic',
      basicUsers: ['alice'],
      ipAllow: ['10.0.0.0/8', '127.0.0.1/32'],
      ipDeny: ['10.9.0.0/16'],
      rateLimit: { perSecond: 50, burst: 100 },
      httpsRedirect: false,
    });
    expect(
      (await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x', undefined, { authorization: basic('alice', 'alice-password') })).status,
    ).toBe(200);
    expect((await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x')).status).toBe(401);
  });

  it('adds a second user keeping the first, and turns the redirect and the limit on and off', async () => {
    const update = await monctl(
      ['routes', 'update', 'web', '--basic-auth', 'bob', '--https-redirect', '--rate-limit', 'off', '-o', 'json'],
      { input: 'bob-password\n' },
    );
    expect(update.code, update.stderr).toBe(0);
    expect(update.json()).toMatchObject({ basicUsers: ['alice', 'bob'], httpsRedirect: true, rateLimit: null });
    for (const [user, password] of [
      ['alice', 'alice-password'],
      ['bob', 'bob-password'],
    ]) {
      expect(
        (await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x', undefined, { authorization: basic(user, password) })).status,
        user,
      ).toBe(200);
    }
    const off = await monctl(['routes', 'update', 'web', '--no-https-redirect', '--auth', 'none', '--ip-allow', '', '-o', 'json']);
    expect(off.json()).toMatchObject({ auth: 'none', httpsRedirect: false, ipAllow: [] });
    expect((await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x')).status).toBe(200);
  });

  it('shows the access control and the certificate state in routes get, and refuses bad values with exit 2', async () => {
    const get = await monctl(['routes', 'get', 'web']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/AUTH/);
    expect(get.stdout).toMatch(/CERTIFICATE/);
    expect(get.stdout).toMatch(/NONE/);
    const bad = await monctl(['routes', 'update', 'web', '--rate-limit', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--rate-limit must be RATE\[:BURST\]/);
    const badCidr = await monctl(['routes', 'update', 'web', '--ip-deny', 'nope']);
    expect(badCidr.code).toBe(1);
    expect(badCidr.stderr).toMatch(/ipDeny\[0\]/);
  });

  it('prompts for the basic-auth password on a terminal, without echoing it', async () => {
    // `script` gives the CLI a pseudo-terminal; the password is typed once the prompt shows.
    // The CLI must stay in the terminal's foreground process group, or switching the terminal
    // to raw mode stops it (SIGTTOU): so `exec`, and no `timeout` wrapper (it makes its own
    // group, which CI's /bin/sh does not hide by exec'ing it). SHELL is pinned to that /bin/sh.
    const env = {
      ...process.env,
      SHELL: '/bin/sh',
      MONCTL_SERVER: tunnel.daemon.url,
      MONCTL_API_KEY: tunnel.daemon.adminKey,
      MONCTL_CONFIG_DIR: home.dir,
      NO_COLOR: '1',
    };
    const child = spawn(
      'script',
      ['-qec', `exec ${join(ROOT, 'bin/monctl')} routes update web --auth basic --basic-auth carol`, '/dev/null'],
      { env, stdio: 'pipe' },
    );
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000);
    let out = '';
    const prompts = [/Password for carol: /, /Repeat password for carol: /]; // readline then moves the cursor
    let typed = 0;
    child.stdout.on('data', (c) => {
      out += c;
      if (typed < prompts.length && prompts[typed].test(out)) {
        typed++;
        child.stdin.write('carol-password\r');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(deadline);
    expect(code, out || '(nothing on the terminal)').toBe(0);
    expect(typed).toBe(2);
    expect(out).not.toContain('carol-password');
    expect(
      (await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x', undefined, { authorization: basic('carol', 'carol-password') })).status,
    ).toBe(200);
  });

  it('creates a route key that opens the route with auth apiKey', async () => {
    await monctl(['routes', 'update', 'web', '--auth', 'apiKey']);
    const key = await monctl(['keys', 'create', 'web-key', '--route', 'web']);
    expect(key.code, key.stderr).toBe(0);
    expect(key.stderr).toMatch(/Created route key web-key/);
    const token = key.stdout.trim();
    expect((await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', '/x')).status).toBe(401);
    const ok = await edge(tunnel.daemon.edgeUrl, 'web.test', 'GET', `/x?token=${token}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('hello /x');
    const list = await monctl(['keys', 'list', '-o', 'json']);
    expect(list.json().find((k: { name: string }) => k.name === 'web-key')).toMatchObject({ routeIds: [expect.any(Number)] });
  });
});
