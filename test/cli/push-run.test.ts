import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TailBuffer } from '../../cli/push/tail-buffer.ts';
import { ROOT } from '../helpers/daemon.ts';
import { runMonctl, tempHome } from './run.ts';

/**
 * `monctl run` and `monctl ping` on their own (docs/API.md#push-checks): the process handling,
 * what reaches a ping receiver (a real HTTP server recording what it gets), and the flags that
 * exit 2 before any request. The daemon's side is in push-e2e.test.ts.
 */
// Each test runs monctl many times, a cold start each: generous on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000 });
const home = tempHome();
/** Nothing listens on port 1: every ping there fails to connect. */
const NOWHERE = { MONCTL_SERVER: 'http://127.0.0.1:1', MONCTL_CONFIG_DIR: home.dir };
const UUID = '123e4567-e89b-12d3-a456-426614174000';

interface Received {
  method: string;
  path: string;
  body: string;
}
let server: Server;
let base = '';
const received: Received[] = [];
/** Answers the next N requests with this status instead of 200. */
const failing: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = failing.shift() ?? 200;
      if (status === 200) received.push({ method: req.method!, path: req.url!, body: Buffer.concat(chunks).toString('utf8') });
      res
        .writeHead(status, { 'content-type': 'text/plain', ...(status === 429 ? { 'retry-after': '1' } : {}) })
        .end(status === 200 ? 'OK' : 'no');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping/${UUID}`;
});
afterAll(async () => {
  server.close();
  home.cleanup();
});

describe('monctl run', () => {
  it('pings start, then the exit code with the output as body, and exits with the command’s code', async () => {
    received.length = 0;
    const res = await runMonctl(['run', base, '--', 'sh', '-c', 'echo to-stdout; echo to-stderr >&2; exit 3'], { env: NOWHERE });
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('to-stdout\n');
    expect(res.stderr).toBe('to-stderr\n');
    expect(received.map((r) => `${r.method} ${r.path}`)).toEqual([`POST /ping/${UUID}/start`, `POST /ping/${UUID}/3`]);
    expect(received[1].body).toBe('to-stdout\nto-stderr\n');
  });

  it('sends only the last 10 KiB of a long output', async () => {
    received.length = 0;
    // 30,000 lines of 6 bytes: 180 KB passed through, the last 10,240 bytes sent.
    const res = await runMonctl(['run', base, '--', 'sh', '-c', 'seq 100001 130000'], { env: NOWHERE });
    expect(res.code).toBe(0);
    expect(res.stdout.length).toBe(30_000 * 7);
    const body = received.find((r) => r.path.endsWith('/0'))!.body;
    expect(body.length).toBe(10 * 1024);
    expect(res.stdout.endsWith(body)).toBe(true);
  });

  it('retries a ping that fails (503, then 429 with Retry-After) and keeps the exit code', async () => {
    received.length = 0;
    failing.push(503, 429);
    const res = await runMonctl(['run', base, '--', 'true'], { env: NOWHERE });
    expect(res.code).toBe(0);
    expect(received.map((r) => r.path).sort()).toEqual([`/ping/${UUID}/0`, `/ping/${UUID}/start`]);
  });

  it('runs the command when monctl cannot be reached: its output appears, the failure is on stderr, the exit code kept', async () => {
    const res = await runMonctl(['run', UUID, '--', 'sh', '-c', 'echo still-ran; exit 3'], { env: NOWHERE });
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('still-ran\n');
    expect(res.stderr).toMatch(/could not ping start: cannot reach http:\/\/127\.0\.0\.1:1/);
    expect(res.stderr).toMatch(/could not ping 3: cannot reach/);
  });

  it('a command that is not found: exit 127, and a ping with 127 saying so', async () => {
    received.length = 0;
    const res = await runMonctl(['run', base, '--', 'no-such-command-monctl'], { env: NOWHERE });
    expect(res.code).toBe(127);
    expect(res.stderr).toMatch(/no-such-command-monctl: command not found/);
    expect(received.find((r) => r.path.endsWith('/127'))?.body).toMatch(/command not found/);
  });

  it('a command killed by a signal is a failure: 128 + n', async () => {
    received.length = 0;
    const res = await runMonctl(['run', base, '--', 'sh', '-c', 'kill -KILL $$'], { env: NOWHERE });
    expect(res.code).toBe(137);
    expect(received.map((r) => r.path)).toContain(`/ping/${UUID}/137`);
  });

  it('forwards SIGTERM to the command, which decides how it ends', async () => {
    received.length = 0;
    const child = spawn(
      join(ROOT, 'bin/monctl'),
      ['run', base, '--', 'sh', '-c', 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done'],
      { env: { ...process.env, ...NOWHERE }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out === 'ready\n') child.kill('SIGTERM');
    });
    const [code] = await once(child, 'exit');
    expect(out).toBe('ready\ngot-term\n');
    expect(code).toBe(7);
    expect(received.map((r) => r.path)).toContain(`/ping/${UUID}/7`);
  });

  it('a background child that keeps the output pipes open does not hold the finish ping', async () => {
    received.length = 0;
    // The sleep inherits the command's stdout; the command itself exits at once.
    const res = await runMonctl(['run', base, '--', 'sh', '-c', 'sleep 300 & echo $!'], { env: NOWHERE });
    process.kill(Number(res.stdout.trim()), 'SIGKILL');
    expect(res.code).toBe(0);
    expect(received.map((r) => r.path)).toContain(`/ping/${UUID}/0`);
  });

  it('without a command: a usage error (exit 2) that runs nothing', async () => {
    const res = await runMonctl(['run', UUID], { env: NOWHERE });
    expect(res.code).toBe(2);
  });
});

describe('monctl ping', () => {
  it('sends each kind to its path, with a body from text, a file or stdin', async () => {
    received.length = 0;
    for (const args of [[], ['--start'], ['--fail'], ['--log', '--body', 'hello'], ['--exit-code', '4', '--body', '-']]) {
      const res = await runMonctl(['ping', base, ...args], { env: NOWHERE, input: 'from-stdin' });
      expect(res.code, res.stderr).toBe(0);
    }
    expect(received.map((r) => `${r.path.slice(42) || '/'} ${r.body}`)).toEqual(['/ ', '/start ', '/fail ', '/log hello', '/4 from-stdin']);
  });

  it('404: exit 3 naming the URL; 429: exit 1 saying when to retry', async () => {
    failing.push(404);
    const missing = await runMonctl(['ping', base], { env: NOWHERE });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no push check has the ping URL .*\(404\)/);
    failing.push(429);
    const limited = await runMonctl(['ping', base], { env: NOWHERE });
    expect(limited.code).toBe(1);
    expect(limited.stderr).toMatch(/rate-limited \(429\): retry in 1 s/);
  });

  it.each([
    [['--start', '--fail'], /give one of --start, --fail, --exit-code and --log, not --start and --fail/],
    [['--exit-code', '256'], /--exit-code must be a number from 0 to 255/],
    [['--body', '@/no/such/file'], /--body: cannot read \/no\/such\/file: ENOENT/],
  ])('%j exits 2 before any request', async (args, message) => {
    const res = await runMonctl(['ping', UUID, ...args], { env: NOWHERE });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});

describe('resources add --push: flags checked before any request', () => {
  it.each([
    [['--push', '--interval', '60'], /--push does not take --interval/],
    [['--push', '--target', 'https://example.com/'], /--push does not take --target \(a push check has a --slug\)/],
    [['--push', '--period', '1d', '--cron', '0 3 * * *'], /give --period or --cron, not both/],
    [['--push', '--period', '5s'], /--period must be a duration of whole seconds from 10s to 365d/],
    [['--push', '--grace', 'soon'], /--grace must be a duration/],
    [['--push', '--tz', 'Europe/Berlin'], /--tz is the time zone of --cron: give --cron too/],
    [['--push', '--cron', '0 3 *'], /--cron needs 5 to 7 fields/],
    [['--push', '--slug', '../etc'], /--slug must be lower-case letters/],
    [['--period', '1d'], /are for a push check: add --push/],
    [['--push', '--type', 'HTTP'], /--push makes a PUSH resource: drop --type HTTP/],
  ])('%j exits 2', async (args, message) => {
    const res = await runMonctl(['resources', 'add', 'job', ...args], { env: NOWHERE });
    expect(res.stderr).toMatch(message);
    expect(res.code).toBe(2);
  });
});

describe('TailBuffer', () => {
  it('keeps exactly the last bytes, whatever the chunk sizes', () => {
    const all = Buffer.from(Array.from({ length: 5000 }, (_, i) => `${i},`).join(''));
    for (const size of [1, 7, 1000, 4096, 30_000]) {
      const tail = new TailBuffer(1024);
      for (let at = 0; at < all.length; at += size) tail.push(all.subarray(at, at + size));
      expect(tail.bytes().equals(all.subarray(all.length - 1024))).toBe(true);
      expect(tail.total).toBe(all.length);
    }
  });
});
