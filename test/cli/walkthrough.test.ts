import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { useAdminCli } from './run.ts';

/**
 * What the CLI walkthrough of issue 13 found, one test each, against a real
 * daemon and the real binary (stdin a pipe, as in a script).
 */
const cli = useAdminCli();
const { monctl } = cli;
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
const names = async (noun: string) => (await monctl([noun, 'list', '-o', 'json'])).json().map((x: { name: string }) => x.name);

describe('apply --prune is a destructive command', () => {
  it('refuses without --yes when stdin is not a terminal, listing what it would delete; --yes deletes; --dry-run needs neither', async () => {
    expect((await monctl(['groups', 'add', 'stale-group'])).code).toBe(0);
    expect((await monctl(['resources', 'add', 'stale', '--target', 'http://127.0.0.1:9/stale', '--inactive'])).code).toBe(0);
    const file = join(cli.home.dir, 'prune.yaml');
    writeFileSync(file, 'resources:\n  - {name: kept, type: HTTP, target: "http://127.0.0.1:9/kept", active: false}\n');

    const refused = await monctl(['apply', '-f', file, '--prune']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect(refused.stderr).toMatch(/^ {2}- resource stale$/m);
    expect(refused.stderr).toMatch(/^ {2}- group stale-group$/m);
    // Nothing at all was changed, not even the creation.
    expect(await names('resources')).toEqual(['stale']);

    const dry = await monctl(['apply', '-f', file, '--prune', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^- delete resource stale$/m);
    expect(await names('resources')).toEqual(['stale']);

    const yes = await monctl(['apply', '-f', file, '--prune', '--yes']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toMatch(/Applied: 1 created, 0 updated, 2 deleted/);
    expect(await names('resources')).toEqual(['kept']);
    expect(await names('groups')).toEqual([]);
    // Nothing to delete: no confirmation needed.
    expect((await monctl(['apply', '-f', file, '--prune'])).stdout).toMatch(/No changes/);
    expect((await monctl(['resources', 'rm', 'kept', '--yes'])).code).toBe(0);
  });
});

describe('groups rm says what the daemon does', () => {
  it('help does not promise to keep the resources; a group with resources is refused before asking, naming them', async () => {
    const help = await monctl(['groups', 'rm', '--help']);
    expect(help.stdout).not.toMatch(/resources stay/);
    expect(help.stdout).toMatch(/refuses to delete a group that still has resources/);

    expect((await monctl(['groups', 'add', 'crew'])).code).toBe(0);
    expect((await monctl(['resources', 'add', 'member', '--target', 'http://127.0.0.1:9/m', '--inactive', '--group', 'crew'])).code).toBe(
      0,
    );
    // Not exit 2 ("needs --yes"): the refusal comes first, with no question asked.
    const refused = await monctl(['groups', 'rm', 'crew']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/group crew still has 1 resource\(s\): member/);
    expect(refused.stderr).toMatch(/--no-groups/);
    expect(await names('groups')).toEqual(['crew']);

    // The way out the message names works.
    const out = await monctl(['resources', 'update', 'member', '--no-groups', '-o', 'json']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json()).toMatchObject({ name: 'member', groups: [] });
    expect((await monctl(['resources', 'update', 'member', '--no-groups', '--group', 'crew'])).code).toBe(2);
    expect((await monctl(['groups', 'rm', 'crew', '--yes'])).code).toBe(0);
    expect((await monctl(['resources', 'rm', 'member', '--yes'])).code).toBe(0);
  });
});

describe('agents token --output-file', () => {
  /** Whether the daemon accepts this registration token: the agent's own dial, closed at once. */
  const accepted = (token: string) =>
    new Promise<boolean>((resolve, reject) => {
      const req = request(new URL('/admin/tunnel', cli.d.url), {
        headers: { connection: 'Upgrade', upgrade: 'monctl-tunnel', authorization: `Bearer ${token}` },
        agent: false,
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve(true);
      });
      req.on('response', (res) => {
        res.resume();
        if (res.statusCode === 401) resolve(false);
        else reject(new Error(`tunnel dial answered ${res.statusCode}`));
      });
      req.on('error', reject);
      req.end();
    });

  it('writes the token to a new 0600 file, refuses an existing file before rotating, replaces it with --force', async () => {
    const file = join(cli.home.dir, 'office.token');
    const add = await monctl(['agents', 'add', 'office', '--token', '--output-file', file]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe('');
    expect(add.stderr).toMatch(/written to .*office\.token \(mode 0600\)/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = readFileSync(file, 'utf8').trim();
    expect(await accepted(first)).toBe(true);

    // An existing file: refused, and the token is not rotated (a lost token would lock the agent out).
    const exists = await monctl(['agents', 'token', 'office', '--yes', '--output-file', file]);
    expect(exists.code).toBe(2);
    expect(exists.stderr).toMatch(/exists.*--force/);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(await accepted(first)).toBe(true);

    const forced = await monctl(['agents', 'token', 'office', '--yes', '--output-file', file, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe('');
    const second = readFileSync(file, 'utf8').trim();
    expect(second).not.toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await accepted(second)).toBe(true);
    expect(await accepted(first)).toBe(false);

    const nowhere = await monctl(['agents', 'token', 'office', '--yes', '--output-file', join(cli.home.dir, 'no-dir', 'x')]);
    expect(nowhere.code).toBe(1);
    expect(await accepted(second)).toBe(true);
  });
});

describe('resources add --wait', () => {
  it('prints the resource (its id, not the history entry id) after the first check; exit 5 when NOT_AVAILABLE', async () => {
    // A few checks first, so that history ids and resource ids differ.
    for (const n of [1, 2])
      expect((await monctl(['resources', 'add', `pre-${n}`, '--target', 'http://127.0.0.1:9/pre', '--wait'])).code).toBe(5);
    const json = await monctl(['resources', 'add', 'waited', '--target', 'http://127.0.0.1:9/w', '--wait', '-o', 'json']);
    expect(json.code, json.stderr).toBe(5);
    const id = (await monctl(['resources', 'get', 'waited', '-o', 'json'])).json().id;
    expect(json.json()).toMatchObject({ id, name: 'waited', currentStatus: 'not_available', latestErrorCode: 'CONNECTION_ERROR' });
    const history = (await monctl(['resources', 'history', 'waited', '-o', 'json'])).json();
    expect(history[0].id).not.toBe(id);

    const table = await monctl(['resources', 'add', 'waited-2', '--target', 'http://127.0.0.1:9/w2', '--wait']);
    expect(table.code).toBe(5);
    const id2 = (await monctl(['resources', 'get', 'waited-2', '-o', 'json'])).json().id;
    expect(table.stdout).toMatch(new RegExp(`^ID\\t${id2}$`, 'm'));
    expect(table.stdout).toMatch(/^NAME\twaited-2$/m);
  }, 60_000);

  it('refuses --wait on an inactive resource at once, creating nothing', async () => {
    const res = await monctl([
      'resources',
      'add',
      'asleep',
      '--target',
      'http://127.0.0.1:9/a',
      '--inactive',
      '--wait',
      '--wait-timeout',
      '3',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/inactive resource/);
    expect((await monctl(['resources', 'get', 'asleep'])).code).toBe(3);
  });
});

describe('-o formats', () => {
  it('the help and the error list the same formats, and each of them works', async () => {
    const help = (await monctl(['users', 'list', '--help'])).stdout;
    const inHelp = /-o, --output <format>\s+(.+)$/m.exec(help)?.[1];
    const error = (await monctl(['users', 'list', '-o', 'xml'])).stderr;
    const inError = /\(one of (.+)\)/.exec(error)?.[1];
    expect(inHelp).toBeDefined();
    expect(inError).toBe(inHelp);
    for (const format of inHelp!.split(/, | or /)) expect((await monctl(['users', 'list', '-o', format])).code, format).toBe(0);
  });

  it('an unknown format is refused before a mutation is sent', async () => {
    expect((await monctl(['groups', 'add', 'never', '-o', 'xml'])).code).toBe(2);
    expect(await names('groups')).not.toContain('never');
  });
});

describe('errors', () => {
  it('prints each validation error once', async () => {
    const short = await monctl(['users', 'add', 'dave'], { input: 'short\n' });
    expect(short.code).toBe(1);
    expect(short.stderr.match(/password/g)).toHaveLength(1);
    expect((await monctl(['groups', 'add', 'twice'])).code).toBe(0);
    const again = await monctl(['groups', 'add', 'twice']);
    expect(again.code).toBe(1);
    expect(again.stderr.match(/exists/g)).toHaveLength(1);
    expect((await monctl(['groups', 'rm', 'twice', '--yes'])).code).toBe(0);
  });
});

describe('info', () => {
  it('exits 1 when the daemon is unreachable, with or without a credential, after printing what it knows', async () => {
    for (const key of ['', cli.d.adminKey]) {
      const res = await monctl(['info', '--server', 'http://127.0.0.1:1'], { env: { MONCTL_API_KEY: key } });
      expect(res.code, `key "${key.slice(0, 4)}"`).toBe(1);
      expect(res.stdout).toMatch(/^server\thttp:\/\/127\.0\.0\.1:1$/m);
      expect(res.stdout).toMatch(key ? /^credential\tenv MONCTL_API_KEY$/m : /^credential\tnone$/m);
      expect(res.stdout).toMatch(/^reachable\tfalse$/m);
      expect(res.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:1/m);
    }
    const anonymous = await monctl(['info', '-o', 'json'], { env: { MONCTL_API_KEY: '' } });
    expect(anonymous.code, anonymous.stderr).toBe(0);
    expect(anonymous.json()).toMatchObject({ reachable: true, credential: 'none', user: null });
  });
});

describe('agent names in tables', () => {
  it('routes list and get show the agent name; json keeps agentId', async () => {
    const agent = await cli.d.admin.call(operations.createAgent, { body: { name: 'named-agent' } });
    const add = await monctl([
      'routes',
      'add',
      'named-route',
      '--agent',
      'named-agent',
      '--hostname',
      'named.test',
      '--target',
      'http://127.0.0.1:9',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const [head, ...rows] = tsv((await monctl(['routes', 'list'])).stdout);
    const row = rows.find((r) => r[1] === 'named-route')!;
    expect(row[head.indexOf('AGENT')]).toBe('named-agent');
    expect((await monctl(['routes', 'get', 'named-route'])).stdout).toMatch(/^AGENT\tnamed-agent$/m);
    expect((await monctl(['routes', 'get', 'named-route', '-o', 'json'])).json()).toMatchObject({ agentId: agent.id });
  });
});
