import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAdminCli } from './run.ts';

// `monctl resources test` (docs/API.md#testing-a-check): add's flags or -f FILE, a readable report
// or -o json, exit 0 when AVAILABLE and 5 when not; nothing is stored.
const cli = useAdminCli();
const { monctl } = cli;
let web: Server;
let base: string;

beforeAll(async () => {
  web = createServer((req, res) => {
    const status = req.url === '/down' ? 'DOWN' : 'UP';
    res.writeHead(200, { 'content-type': 'application/json', 'x-version': '7' }).end(JSON.stringify({ status, items: [1, 2] }));
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});

afterAll(async () => {
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

describe('monctl resources test', () => {
  it('a server that fails one condition: exit 5, the report names the condition and the value seen', async () => {
    const run = await monctl([
      'resources',
      'test',
      '--target',
      `${base}/down`,
      '--condition',
      '[STATUS] == 200',
      '--condition',
      '[BODY].status == UP',
    ]);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toMatch(/^NOT_AVAILABLE at daemon: /);
    expect(run.stdout).toContain('[BODY].status (DOWN) == UP');
    expect(run.stdout).toContain('CONDITION_FAILED');
    expect(run.stdout).toMatch(/^ {2}✓ \[STATUS\] == 200/m);
    expect(run.stdout).toMatch(/^ {2}✗ \[BODY\]\.status == UP +\[BODY\]\.status \(DOWN\) == UP$/m);
    expect(run.stdout).toMatch(/^Response\n {2}200 OK\n/m);
    expect(run.stdout).toContain('  x-version: 7');
    expect(run.stdout).toContain('{"status":"DOWN","items":[1,2]}');
    expect(run.stdout).toMatch(/^Timing\n {2}dns .* · connect .* · tls - · first byte \d.* · total \d/m);
  });

  it('passes with exit 0; -o json prints the API answer', async () => {
    const run = await monctl(['resources', 'test', 'api', '--target', `${base}/up`, '--condition', 'len([BODY].items) == 2', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ location: 'daemon', status: 'AVAILABLE', errorCode: null });
  });

  it('-f FILE: one resource in apply format, alone or in a resources: list; nothing is stored', async () => {
    const alone = join(cli.home.dir, 'one.yaml');
    writeFileSync(alone, `name: api\ntype: HTTP\ntarget: ${base}/down\nconditions: ['[BODY].status == UP']\n`);
    const failed = await monctl(['resources', 'test', '-f', alone]);
    expect(failed.code, failed.stderr).toBe(5);
    expect(failed.stdout).toContain('[BODY].status (DOWN) == UP');
    const listed = join(cli.home.dir, 'list.yaml');
    writeFileSync(listed, `resources:\n  - name: api\n    type: HTTP\n    target: ${base}/up\n    conditions: ['[BODY].status == UP']\n`);
    const passed = await monctl(['resources', 'test', '-f', listed, '-o', 'json']);
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.json().status).toBe('AVAILABLE');
    expect((await monctl(['resources', 'list', '-o', 'json'])).json()).toEqual([]);
  });

  it('resources get shows the latest timing', async () => {
    const add = await monctl(['resources', 'add', 'timed', '--target', `${base}/up`, '--interval', '3600', '--wait']);
    expect(add.code, add.stderr).toBe(0);
    const shown = await monctl(['resources', 'get', 'timed']);
    expect(shown.stdout).toMatch(/TIMING\s+dns .* · total \d/);
    await monctl(['resources', 'rm', 'timed', '-y']);
  });

  it('usage errors exit 2; a condition the daemon refuses names the flag, exit 1', async () => {
    expect((await monctl(['resources', 'test', '--type', 'HTTP'])).code).toBe(2);
    const two = join(cli.home.dir, 'two.yaml');
    writeFileSync(two, `resources:\n  - {name: a, type: HTTP, target: ${base}/}\n  - {name: b, type: HTTP, target: ${base}/}\n`);
    const many = await monctl(['resources', 'test', '-f', two]);
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(/one resource; the file has 2/);
    expect((await monctl(['resources', 'test', '-f', two, '--target', `${base}/`])).code).toBe(2);
    const bad = await monctl(['resources', 'test', '--target', `${base}/up`, '--condition', '[BODY].status==UP']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--condition/);
  });
});
