import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** Header line and rows of tab-separated output (stdout is a pipe, so no table borders). */
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));

describe('users and keys', () => {
  it('lists users as a tab-separated table and as JSON', async () => {
    const table = await monctl(['users', 'list']);
    expect(table.code).toBe(0);
    const [head, ...rows] = tsv(table.stdout);
    expect(head).toEqual(['ID', 'USERNAME', 'ROLE', '2FA', 'SSO', 'CREATED']);
    expect(rows.map((r) => r[1])).toContain('admin');
    expect(table.stdout).not.toMatch(/\u001b\[/); // no colour in a pipe
    const json = await monctl(['users', 'list', '-o', 'json']);
    expect(json.json()).toEqual(expect.arrayContaining([expect.objectContaining({ username: 'admin', role: 'ADMIN' })]));
    const yaml = await monctl(['users', 'list', '-o', 'yaml']);
    expect(yaml.stdout).toMatch(/username: admin/);
  });

  it('adds a user with the password from stdin, updates and removes it', async () => {
    const add = await monctl(['users', 'add', 'carol', '--role', 'user', '-o', 'json'], { input: 'carol-password-123\n' });
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({ username: 'carol', role: 'USER' });
    const upd = await monctl(['users', 'update', 'carol', '--role', 'ADMIN']);
    expect(upd.stdout).toMatch(/Updated user carol .*ADMIN/);
    const noYes = await monctl(['users', 'rm', 'carol']);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/--yes/);
    expect((await monctl(['users', 'rm', 'carol', '--yes'])).code).toBe(0);
    expect((await monctl(['users', 'rm', 'carol', '--yes'])).code).toBe(3);
  });

  it('reports field errors of a 400 on stderr with exit 1', async () => {
    const res = await monctl(['users', 'add', 'dave'], { input: 'short\n' });
    expect(res.code).toBe(1);
    // Once: the daemon's detail already names the field (test/cli/walkthrough.test.ts).
    expect(res.stderr).toMatch(/^error: .*password: /m);
  });

  it('creates a key (token alone on stdout) that works, and revokes it', async () => {
    const created = await monctl(['keys', 'create', 'ci-key', '--role', 'USER']);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    const me = await monctl(['info', '-o', 'json'], { env: { MONCTL_API_KEY: token } });
    expect(me.json()).toMatchObject({ user: 'admin', role: 'USER', credential: 'env MONCTL_API_KEY' });
    const forbidden = await monctl(['users', 'list'], { env: { MONCTL_API_KEY: token } });
    expect(forbidden.code).toBe(4);
    const list = await monctl(['keys', 'list', '-o', 'json']);
    expect(list.json().map((k: { name: string }) => k.name)).toContain('ci-key');
    expect((await monctl(['keys', 'revoke', 'ci-key', '--yes'])).code).toBe(0);
    const revoked = await monctl(['users', 'list'], { env: { MONCTL_API_KEY: token } });
    expect(revoked.code).toBe(4);
    expect(revoked.stderr).toMatch(/revoked/);
  });
});

describe('exit codes and usage', () => {
  it('exits 2 on usage errors, 3 on 404, 4 without credentials', async () => {
    expect((await monctl(['users', 'bogus'])).code).toBe(2);
    expect((await monctl(['resources', 'list', '-o', 'xml'])).code).toBe(2);
    expect((await monctl(['resources', 'add', 'x'])).code).toBe(2);
    expect((await monctl(['agents', 'get', '987654'])).code).toBe(3);
    expect((await monctl(['resources', 'get', 'no-such-name'])).code).toBe(3);
    const anon = await monctl(['users', 'list'], { env: { MONCTL_API_KEY: '' } });
    expect(anon.code).toBe(4);
  });

  it('prints the version and help with exit 0', async () => {
    const v = await monctl(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await monctl(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/resources/);
  });

  it('exits 1 with a clear message when the daemon is unreachable', async () => {
    const res = await monctl(['users', 'list'], { env: { MONCTL_SERVER: 'http://127.0.0.1:1' } });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:1/);
  });
});

describe('monitoring nouns', () => {
  it('groups: add, list, update, rm', async () => {
    expect((await monctl(['groups', 'add', 'team', '--visibility', 'authenticated'])).code).toBe(0);
    const list = await monctl(['groups', 'list']);
    expect(tsv(list.stdout)).toContainEqual(expect.arrayContaining(['team', 'AUTHENTICATED']));
    const upd = await monctl(['groups', 'update', 'team', '--visibility', 'HIDDEN', '-o', 'json']);
    expect(upd.json()).toMatchObject({ name: 'team', visibility: 'HIDDEN' });
    expect((await monctl(['groups', 'rm', 'team', '--yes'])).code).toBe(0);
  });

  it('resources: add, get (admin view), update, history, rm', async () => {
    expect((await monctl(['groups', 'add', 'ops'])).code).toBe(0);
    const add = await monctl([
      'resources',
      'add',
      'web',
      '--type',
      'http',
      '--target',
      `${cli.d.url}/actuator/health`,
      '--group',
      'ops',
      '--interval',
      '600',
      '--inactive',
      '-o',
      'json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const id = add.json().id;
    // Inactive resources only show through the admin endpoints, which an ADMIN credential uses.
    const get = await monctl(['resources', 'get', 'web', '-o', 'json']);
    expect(get.json()).toMatchObject({ id, name: 'web', intervalSeconds: 600, active: false, groups: [{ name: 'ops' }] });
    const table = await monctl(['resources', 'get', String(id)]);
    expect(table.stdout).toMatch(/^INTERVAL\t600$/m);
    const list = await monctl(['resources', 'list', '-o', 'wide']);
    expect(tsv(list.stdout)[0]).toContain('INTERVAL');
    expect(tsv(list.stdout).map((r) => r[1])).toContain('web');
    // A USER credential lists through the public endpoint: active resources only.
    const userKey = (await monctl(['keys', 'create', 'reader', '--role', 'USER'])).stdout.trim();
    const asUser = await monctl(['resources', 'list', '-o', 'json'], { env: { MONCTL_API_KEY: userKey } });
    expect(asUser.code, asUser.stderr).toBe(0);
    expect(asUser.json().map((r: { name: string }) => r.name)).not.toContain('web');
    const upd = await monctl(['resources', 'update', 'web', '--interval', '300', '-o', 'json']);
    expect(upd.json()).toMatchObject({ intervalSeconds: 300 });
    const bad = await monctl(['resources', 'update', 'web', '--interval', '5']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--interval: /); // the flag, not the API field (issue 25)
    expect(bad.stderr).not.toMatch(/intervalSeconds/);
    const history = await monctl(['resources', 'history', 'web', '-o', 'json']);
    expect(history.code).toBe(0);
    expect(Array.isArray(history.json())).toBe(true);
    expect((await monctl(['resources', 'rm', 'web'])).code).toBe(2);
    expect((await monctl(['resources', 'rm', 'web', '-y'])).code).toBe(0);
    expect((await monctl(['resources', 'get', String(id)])).code).toBe(3);
  });

  it('announcements: content from stdin and from a file', async () => {
    const add = await monctl(['announcements', 'add', '--kind', 'warning', '-o', 'json'], {
      input: '<p>Maintenance <script>x()</script>tonight</p>',
    });
    expect(add.code, add.stderr).toBe(0);
    const a = add.json();
    expect(a).toMatchObject({ kind: 'WARNING', active: true });
    expect(a.content).not.toMatch(/script/);
    const list = await monctl(['announcements', 'list']);
    expect(list.stdout).toMatch(/WARNING\ttrue\t-\tMaintenance tonight/);
    const upd = await monctl(['announcements', 'update', String(a.id), '--kind', 'problem', '--inactive', '-o', 'json']);
    expect(upd.json()).toMatchObject({ id: a.id, kind: 'PROBLEM', active: false, content: a.content });
    const file = join(cli.home.dir, 'notice.html');
    writeFileSync(file, '<p>From a <em>file</em></p>');
    const fromFile = await monctl(['announcements', 'update', String(a.id), '--file', file, '-o', 'json']);
    expect(fromFile.json()).toMatchObject({ kind: 'PROBLEM', content: '<p>From a <em>file</em></p>' });
    expect((await monctl(['announcements', 'add', '--file', join(cli.home.dir, 'missing.html')])).code).toBe(2);
    expect((await monctl(['announcements', 'rm', String(a.id), '--yes'])).code).toBe(0);
    expect((await monctl(['announcements', 'get', String(a.id)])).code).toBe(3);
  });

  it('cors and registry credentials', async () => {
    expect((await monctl(['cors', 'add', 'https://app.example.test'])).code).toBe(0);
    expect((await monctl(['cors', 'list'])).stdout).toBe('ORIGIN\nhttps://app.example.test\n');
    expect((await monctl(['cors', 'list', '-o', 'json'])).json()).toEqual({ origins: ['https://app.example.test'] });
    const invalid = await monctl(['cors', 'add', 'app.example.test/']);
    expect(invalid.code).toBe(1);
    expect((await monctl(['cors', 'rm', 'https://app.example.test', '--yes'])).code).toBe(0);

    const add = await monctl(['registry-credentials', 'add', 'registry.example.test', '--username', 'bot', '-o', 'json'], {
      input: 's3cret\n',
    });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).not.toMatch(/s3cret/);
    const list = await monctl(['registry-credentials', 'list', '-o', 'json']);
    expect(list.json()).toEqual([expect.objectContaining({ registry: 'registry.example.test', username: 'bot' })]);
    expect((await monctl(['regcred', 'rm', 'registry.example.test', '--yes'])).code).toBe(0);
  });
});

describe('tunnel nouns', () => {
  it('agents: add, token (confirm on replace), get, rm', async () => {
    const add = await monctl(['agents', 'add', 'edge-1', '--token']);
    expect(add.code).toBe(0);
    expect(add.stdout.trim()).toMatch(/^\S{20,}$/);
    const get = await monctl(['agents', 'get', 'edge-1', '-o', 'json']);
    expect(get.json()).toMatchObject({ name: 'edge-1', status: 'PENDING', hasToken: true });
    expect((await monctl(['agents', 'token', 'edge-1'])).code).toBe(2);
    const token = await monctl(['agents', 'token', 'edge-1', '--yes', '-o', 'json']);
    expect(token.json()).toMatchObject({ token: expect.any(String) });
    const list = await monctl(['agents', 'list']);
    expect(tsv(list.stdout)).toContainEqual(expect.arrayContaining(['edge-1', 'PENDING', 'yes']));
  });

  it('routes: add, list, update, log, rm', async () => {
    const add = await monctl([
      'routes',
      'add',
      'site',
      '--agent',
      'edge-1',
      '--target',
      'http://127.0.0.1:9',
      '--hostname',
      'site.test',
      '--allow-encoded-slashes',
      '-o',
      'json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({ name: 'site', type: 'HTTP', hostname: 'site.test', enabled: true, allowEncodedSlashes: true });
    const list = await monctl(['routes', 'list']);
    expect(tsv(list.stdout)).toContainEqual(expect.arrayContaining(['site', 'HTTP', 'site.test/']));
    const upd = await monctl(['routes', 'update', 'site', '--path-prefix', '/app', '--disabled', '-o', 'json']);
    expect(upd.json()).toMatchObject({ pathPrefix: '/app', enabled: false, allowEncodedSlashes: true });
    const strict = await monctl(['routes', 'update', 'site', '--no-allow-encoded-slashes', '-o', 'json']);
    expect(strict.json()).toMatchObject({ pathPrefix: '/app', allowEncodedSlashes: false });
    const log = await monctl(['routes', 'log', 'site']);
    expect(log.stdout.split('\n')[0]).toBe('AT\tMETHOD\tPATH\tSTATUS\tMS\tCLIENT\tERROR');
    expect((await monctl(['routes', 'log', 'site', '-o', 'json'])).json()).toEqual([]);
    expect((await monctl(['routes', 'rm', 'site', '--yes'])).code).toBe(0);
    expect((await monctl(['agents', 'rm', 'edge-1', '--yes'])).code).toBe(0);
    expect((await monctl(['agents', 'get', 'edge-1'])).code).toBe(3);
  });

  it('topology prints the tree, or JSON', async () => {
    const text = await monctl(['topology']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^pod /m);
    const json = await monctl(['topology', '-o', 'json']);
    expect(json.json()).toMatchObject({
      pods: expect.any(Array),
      agents: expect.any(Array),
      routes: expect.any(Array),
      edges: expect.any(Array),
    });
  });
});

describe('completion', () => {
  it('prints scripts for bash, zsh and fish; other shells are a usage error', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const res = await monctl(['completion', shell]);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/resources/);
    }
    expect((await monctl(['completion', 'tcsh'])).code).toBe(2);
  });

  it("lists each verb's flags, taken from the commands themselves (the request flags of resources add and update)", async () => {
    const bash = (await monctl(['completion', 'bash'])).stdout;
    expect(bash).toMatch(/"resources add"\) words="[^"]*--secret-header [^"]*--expect-status [^"]*--wait-timeout/);
    expect(bash).toMatch(/"resources update"\) words="[^"]*--remove-header [^"]*--no-client-cert/);
  });
});
