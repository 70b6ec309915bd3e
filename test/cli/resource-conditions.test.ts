import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useAdminCli } from './run.ts';

// `resources add|update --condition` (repeatable) and `--no-conditions`, `resources get` showing them, and `apply -f`.
const cli = useAdminCli();
const { monctl } = cli;

describe('resources with conditions from the CLI', () => {
  it('adds, shows, replaces and removes conditions', async () => {
    const target = 'http://127.0.0.1:9/health';
    const add = await monctl([
      'resources',
      'add',
      'api',
      '--type',
      'HTTP',
      '--target',
      target,
      '--inactive',
      '--condition',
      '[STATUS] == 200',
      '--condition',
      '[BODY].status == UP',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const got = await monctl(['resources', 'get', 'api', '-o', 'json']);
    expect(got.json().conditions).toEqual(['[STATUS] == 200', '[BODY].status == UP']);
    const shown = await monctl(['resources', 'get', 'api']);
    expect(shown.stdout).toContain('[BODY].status == UP');
    const replaced = await monctl(['resources', 'update', 'api', '--condition', '[RESPONSE_TIME] < 300', '-o', 'json']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.json().conditions).toEqual(['[RESPONSE_TIME] < 300']);
    const removed = await monctl(['resources', 'update', 'api', '--no-conditions', '-o', 'json']);
    expect(removed.json().conditions).toEqual([]);
    const both = await monctl(['resources', 'update', 'api', '--no-conditions', '--condition', '[STATUS] == 200']);
    expect(both.code).toBe(2);
  });

  it('a condition the daemon refuses names it and the column, exit 1', async () => {
    const bad = await monctl([
      'resources',
      'add',
      'tcp',
      '--type',
      'TCP',
      '--target',
      '127.0.0.1:9',
      '--inactive',
      '--condition',
      '[STATUS] == 200',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--condition #1.*column 1: \[STATUS\] does not apply to TCP/s);
  });

  it('apply -f manages conditions: created, then no change, then replaced', async () => {
    const path = join(cli.home.dir, 'conditions.yaml');
    const write = (conditions: string) =>
      writeFileSync(
        path,
        `resources:\n  - name: applied\n    type: HTTP\n    target: http://127.0.0.1:9/\n    active: false\n    conditions: ${conditions}\n`,
      );
    write(`['[STATUS] == 200', '[BODY].status == UP']`);
    const first = await monctl(['apply', '-f', path]);
    expect(first.code, first.stderr).toBe(0);
    expect((await monctl(['resources', 'get', 'applied', '-o', 'json'])).json().conditions).toEqual([
      '[STATUS] == 200',
      '[BODY].status == UP',
    ]);
    expect((await monctl(['apply', '-f', path])).stdout).toBe('No changes: the daemon already matches the file.\n');
    write('[]');
    const cleared = await monctl(['apply', '-f', path]);
    expect(cleared.stdout).toMatch(/1 updated/);
    expect((await monctl(['resources', 'get', 'applied', '-o', 'json'])).json().conditions).toEqual([]);
  });
});
