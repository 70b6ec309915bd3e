import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { quickRoute } from '../../cli/main.ts';
import { ROOT } from '../helpers/daemon.ts';
import { useAdminCli } from './run.ts';

/**
 * `resources list` skips commander when the command line has the plain shape
 * (cli/main.ts quickRoute), and with `-o json` also skips the Runtime. The
 * same command written in a shape quickRoute refuses (`--output=json`) goes
 * through commander, so each case below compares the two paths byte for byte.
 */
const cli = useAdminCli();
const { monctl } = cli;
let userKey: string;

beforeAll(async () => {
  expect((await monctl(['groups', 'add', 'ops'])).code).toBe(0);
  // Active and inactive: the ADMIN and USER lists differ, so a wrong endpoint shows. `--wait`
  // (exit 5: nothing listens on port 9) lets the first check land; the next is 600 s away,
  // so the list does not change between the two runs of a comparison.
  const web = await monctl([
    'resources',
    'add',
    'web',
    '--target',
    'http://127.0.0.1:9/web',
    '--interval',
    '600',
    '--group',
    'ops',
    '--wait',
  ]);
  expect(web.code, web.stderr).toBe(5);
  const off = await monctl(['resources', 'add', 'off', '--target', 'http://127.0.0.1:9/off', '--inactive']);
  expect(off.code, off.stderr).toBe(0);
  userKey = (await monctl(['keys', 'create', 'reader', '--role', 'USER'])).stdout.trim();
});

/** Runs both forms and expects the same exit code, stdout and stderr; returns the quick one. */
async function same(quick: string[], full: string[], env: Record<string, string> = {}) {
  const [a, b] = await Promise.all([monctl(quick, { env }), monctl(full, { env })]);
  expect({ code: a.code, stdout: a.stdout, stderr: a.stderr }).toEqual({ code: b.code, stdout: b.stdout, stderr: b.stderr });
  return a;
}

describe('quick paths print what commander prints', () => {
  it('-o json as ADMIN and as USER, under the alias too', async () => {
    const admin = await same(['resources', 'list', '-o', 'json'], ['resources', 'list', '--output=json']);
    expect(
      admin
        .json()
        .map((r: { name: string }) => r.name)
        .sort(),
    ).toEqual(['off', 'web']);
    await same(['res', 'ls', '--output', 'json'], ['res', 'ls', '--output=json']);
    const user = await same(['resources', 'list', '-o', 'json'], ['resources', 'list', '--output=json'], { MONCTL_API_KEY: userKey });
    expect(user.json().map((r: { name: string }) => r.name)).toEqual(['web']);
    // Piped, JSON is one line: the quick path prints the daemon's answer as it came.
    expect(admin.stdout).toBe(`${JSON.stringify(admin.json())}\n`);
  });

  it('-o json on a terminal is indented, by both paths', () => {
    // script(1) gives the command a pseudo-terminal as stdout (which turns \n into \r\n).
    const onTty = (args: string) =>
      execFileSync('script', ['-qec', `${join(ROOT, 'bin/monctl')} ${args}`, '/dev/null'], {
        encoding: 'utf8',
        env: { ...process.env, MONCTL_SERVER: cli.d.url, MONCTL_API_KEY: cli.d.adminKey, MONCTL_CONFIG_DIR: cli.home.dir },
      }).replaceAll('\r\n', '\n');
    const quick = onTty('resources list -o json');
    expect(quick).toBe(`${JSON.stringify(JSON.parse(quick), null, 2)}\n`);
    expect(JSON.parse(quick)).toHaveLength(2);
    expect(onTty('resources list --output=json')).toBe(quick);
  });

  it('tables, global options anywhere, and an unknown format', async () => {
    await same(['resources', 'list'], ['resources', 'list', '--output=table']);
    await same(
      ['--no-color', 'resources', 'list', '-o', 'wide', '--server', cli.d.url],
      ['--no-color', 'resources', 'list', '--output=wide', '--server', cli.d.url],
    );
    const xml = await same(['resources', 'list', '-o', 'xml'], ['resources', 'list', '--output=xml']);
    expect(xml.code).toBe(2);
  });

  it('the same errors: rejected key, unreachable daemon, bad server URL', async () => {
    const rejected = await same(['resources', 'list', '-o', 'json'], ['resources', 'list', '--output=json'], {
      MONCTL_API_KEY: 'not-a-key',
    });
    expect(rejected.code).toBe(4);
    const down = await same(
      ['resources', 'list', '-o', 'json', '--server', 'http://127.0.0.1:1'],
      ['resources', 'list', '--output=json', '--server', 'http://127.0.0.1:1'],
    );
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach/);
    const bad = await same(
      ['resources', 'list', '-o', 'json', '--server', 'nonsense'],
      ['resources', 'list', '--output=json', '--server', 'nonsense'],
    );
    expect(bad.code).toBe(2);
  });
});

describe('quickRoute', () => {
  it('takes the plain shape, global options before or after the verb', () => {
    expect(quickRoute(['--server', 'http://h:1', 'res', 'ls', '-o', 'json', '--no-color', '--context', 'c'])).toEqual({
      noun: 'resources',
      verb: 'ls',
      opts: { server: 'http://h:1', output: 'json', color: false, context: 'c' },
    });
    expect(quickRoute(['resources', 'list'])).toEqual({ noun: 'resources', verb: 'list', opts: { color: true } });
  });

  it('leaves every other shape to commander', () => {
    for (const args of [
      ['resources', 'list', '--output=json'],
      ['resources', 'list', '-ojson'],
      ['-o', 'json', 'resources', 'list'],
      ['resources', '-o', 'json', 'list'],
      ['resources', 'list', '-o'],
      ['resources', 'list', '-o', '--help'],
      ['resources', 'list', '-o', 'json', '-o', 'yaml'],
      ['resources', 'list', '--help'],
      ['resources', 'list', '-h'],
      ['resources', 'list', 'extra'],
      ['resources', 'list', '--'],
      ['resources'],
      ['resources', 'list', '--color'],
      ['--version', 'resources', 'list'],
    ])
      expect(quickRoute(args), args.join(' ')).toBeUndefined();
  });
});
