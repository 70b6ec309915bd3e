import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { runMonctl, tempHome } from './run.ts';

let d: TestDaemon;
let home: ReturnType<typeof tempHome>;

beforeAll(async () => {
  d = await startDaemon();
  home = tempHome();
});
afterAll(async () => {
  await d?.stop();
  home?.cleanup();
});

const cfgDir = () => join(home.dir, 'cfg');
/** No MONCTL_API_KEY, no MONCTL_SERVER: only what the config dir and data dir say. */
const monctl = (args: string[], env: Record<string, string> = {}, input?: string) =>
  runMonctl(args, { input, env: { MONCTL_CONFIG_DIR: cfgDir(), XDG_DATA_HOME: join(home.dir, 'xdg'), ...env } });

describe('login, contexts and credential precedence', () => {
  it('logs in with an API key from stdin and writes the config 0600 in a 0700 dir', async () => {
    const res = await monctl(['login', '--server', d.url, '--name', 'local'], {}, `${d.adminKey}\n`);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/as admin \(ADMIN\)/);
    const file = join(cfgDir(), 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cfgDir()).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      current: 'local',
      contexts: { local: { server: d.url, user: 'admin' } },
    });
    const info = await monctl(['info', '-o', 'json']);
    expect(info.json()).toMatchObject({
      server: d.url,
      serverSource: 'context local',
      credential: 'context local',
      user: 'admin',
      role: 'ADMIN',
    });
    const list = await monctl(['context', 'list']);
    expect(list.stdout).toMatch(/^\*\tlocal\t/m);
    expect(list.stdout).not.toContain(d.adminKey);
  });

  it('rejects a bad key at login and saves nothing', async () => {
    const res = await monctl(['login', '--server', d.url, '--name', 'broken'], {}, 'not-a-key\n');
    expect(res.code).toBe(4);
    expect((await monctl(['context', 'list', '-o', 'json'])).json().map((c: { name: string }) => c.name)).not.toContain('broken');
  });

  it('logs in with username and password (form login, CSRF) and creates a key that logout revokes', async () => {
    const res = await monctl(['login', '--server', d.url, '--username', 'admin', '--name', 'pw'], {}, `${ADMIN_PASSWORD}\n`);
    expect(res.code, res.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(cfgDir(), 'config.json'), 'utf8'));
    expect(config.current).toBe('pw');
    const keyId = config.contexts.pw.keyId;
    const keys = await monctl(['keys', 'list', '-o', 'json']);
    expect(keys.json().map((k: { id: number }) => k.id)).toContain(keyId);
    const wrong = await monctl(['login', '--server', d.url, '--username', 'admin', '--name', 'x'], {}, 'wrong-password-1\n');
    expect(wrong.code).toBe(4);
    expect((await monctl(['logout'])).code).toBe(0);
    const after = await monctl(['keys', 'list', '-o', 'json'], { MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey });
    expect(after.json().map((k: { id: number }) => k.id)).not.toContain(keyId);
  });

  it('follows the precedence flag > env > context > local default', async () => {
    expect((await monctl(['context', 'use', 'local'])).code).toBe(0);
    // env key beats the context's key
    const created = await monctl(['keys', 'create', 'user-key', '--role', 'USER']);
    const userKey = created.stdout.trim();
    const viaEnv = await monctl(['info', '-o', 'json'], { MONCTL_API_KEY: userKey });
    expect(viaEnv.json()).toMatchObject({ credential: 'env MONCTL_API_KEY', role: 'USER' });
    // a --server flag beats MONCTL_SERVER
    const flag = await monctl(['info', '-o', 'json', '--server', d.url], { MONCTL_SERVER: 'http://127.0.0.1:1' });
    expect(flag.json()).toMatchObject({ server: d.url, serverSource: 'flag --server', credential: 'context local', user: 'admin' });
    const env = await monctl(['info', '-o', 'json'], { MONCTL_SERVER: 'http://127.0.0.1:1' });
    expect(env.json()).toMatchObject({ serverSource: 'env MONCTL_SERVER', credential: 'none' });
    // without a context: the local default key file of the default data dir
    expect((await monctl(['context', 'rm', 'local'])).code).toBe(0);
    mkdirSync(join(home.dir, 'xdg', 'monctl'), { recursive: true });
    writeFileSync(join(home.dir, 'xdg', 'monctl', 'admin-api-key'), `${d.adminKey}\n`, { mode: 0o600 });
    const local = await monctl(['info', '-o', 'json'], { MONCTL_SERVER: d.url });
    expect(local.json()).toMatchObject({ credential: expect.stringMatching(/^local file .*admin-api-key$/), user: 'admin' });
    const nothing = await monctl(['users', 'list'], { MONCTL_SERVER: d.url, XDG_DATA_HOME: join(home.dir, 'empty') });
    expect(nothing.code).toBe(4);
  });

  it('context use/rm of an unknown name exits 3', async () => {
    expect((await monctl(['context', 'use', 'nope'])).code).toBe(3);
    expect((await monctl(['context', 'rm', 'nope'])).code).toBe(3);
    expect((await monctl(['info', '--context', 'nope'])).code).toBe(2);
  });
});

describe('a daemon started with --listen, --data-dir or --config (issue 25)', () => {
  it('is found through MONCTL_CONFIG (its listen and dataDir, relative to the file), as reset-admin finds it', async () => {
    const dir = join(home.dir, 'etc');
    mkdirSync(dir, { recursive: true });
    const port = new URL(d.url).port;
    // The daemon's own file: a wildcard listen is reached on loopback; dataDir is relative to the file.
    writeFileSync(join(dir, 'monctl.yaml'), `listen: 0.0.0.0:${port}\ndataDir: ${relative(dir, d.dataDir)}\nlogLevel: info\n`);
    const env = { MONCTL_CONFIG: join(dir, 'monctl.yaml'), XDG_DATA_HOME: join(home.dir, 'empty') };
    const info = await monctl(['info', '-o', 'json'], env);
    expect(info.code, info.stderr).toBe(0);
    expect(info.json()).toMatchObject({
      server: `http://127.0.0.1:${port}`,
      serverSource: expect.stringMatching(/^MONCTL_CONFIG .*monctl\.yaml: listen$/),
      credential: `local file ${join(d.dataDir, 'admin-api-key')}`,
      user: 'admin',
    });
    // The quick path (no commander) reads it too.
    expect((await monctl(['resources', 'list', '-o', 'json'], env)).code).toBe(0);
    // MONCTL_DATA_DIR alone finds the key of the default server's daemon: here with MONCTL_SERVER.
    const byDataDir = await monctl(['users', 'list'], {
      MONCTL_SERVER: d.url,
      MONCTL_DATA_DIR: d.dataDir,
      XDG_DATA_HOME: join(home.dir, 'empty'),
    });
    expect(byDataDir.code, byDataDir.stderr).toBe(0);
  });

  it('names --server, MONCTL_SERVER, MONCTL_DATA_DIR and MONCTL_CONFIG when nothing answers', async () => {
    const res = await monctl(['resources', 'list'], { MONCTL_SERVER: 'http://127.0.0.1:1' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED$/m);
    for (const name of ['--server', 'MONCTL_SERVER', 'MONCTL_DATA_DIR', 'MONCTL_CONFIG']) expect(res.stderr).toContain(name);
    const unreadable = await monctl(['resources', 'list'], { MONCTL_CONFIG: join(home.dir, 'missing.yaml') });
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/MONCTL_CONFIG: cannot read .*missing\.yaml/);
  });
});
