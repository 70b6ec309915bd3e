import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ROOT } from '../helpers/daemon.ts';
import { bearer, send, until } from '../helpers/http.ts';

/** `monctl daemon` with exactly these args and env (no test-helper defaults), collecting its output. */
function launch(args: string[], env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONCTL_') && k !== 'XDG_DATA_HOME'));
  const proc: ChildProcess = spawn(join(ROOT, 'bin/monctl'), ['daemon', ...args], {
    cwd: ROOT,
    env: { ...clean, TZ: 'UTC', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  proc.stdout!.on('data', (c) => (out.stdout += c));
  proc.stderr!.on('data', (c) => (out.stderr += c));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve((out.code = code))));
  const lines = () => out.stdout.split('\n').filter(Boolean);
  return { proc, out, exited, lines };
}

describe('monctl daemon command line', () => {
  let base: string;
  const procs: ChildProcess[] = [];
  let busy: Server;
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'monctl-test-'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await new Promise((resolve) => busy.close(resolve));
    rmSync(base, { recursive: true, force: true });
  });

  it('takes every setting from MONCTL_* env vars and defaults the data dir to $XDG_DATA_HOME/monctl', { timeout: 90_000 }, async () => {
    const xdg = join(base, 'xdg');
    const run = launch([], {
      MONCTL_LISTEN: '127.0.0.1:0',
      MONCTL_EDGE_LISTEN: '127.0.0.1:0',
      MONCTL_LOG_LEVEL: 'info',
      XDG_DATA_HOME: xdg,
      MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    procs.push(run.proc);
    await until(() => run.out.stdout.includes('"listening"') || run.out.code !== undefined);
    const listening = run
      .lines()
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'listening');
    expect(listening, run.out.stderr).toBeDefined();
    expect(listening.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listening.edge).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const dataDir = join(xdg, 'monctl');
    expect(listening.dataDir).toBe(dataDir);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const key = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
    expect((await send(listening.api, 'GET', '/api/me', { headers: bearer(key) })).status).toBe(200);
    // The wrapper (bin/monctl) runs the daemon itself, on Node 24, with its young generation capped.
    const argv = readFileSync(`/proc/${run.proc.pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain('--max-semi-space-size=16');
    expect(argv.some((a) => a.endsWith('bin/monctl.ts'))).toBe(true);
    // The .tsx hook is for the CLI's views: the daemon starts without it.
    expect(argv.some((a) => a.includes('tsx-hook'))).toBe(false);

    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    // Structured logs: every stdout line is one JSON object with level, time and message.
    for (const line of run.lines())
      expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number), time: expect.any(String), msg: expect.any(String) });
  });

  it('lets a flag win over its env var', { timeout: 90_000 }, async () => {
    const fromFlag = join(base, 'flag');
    const fromEnv = join(base, 'env');
    const run = launch(['--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--data-dir', fromFlag], {
      MONCTL_DATA_DIR: fromEnv,
      MONCTL_LISTEN: 'not-an-address',
      MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    procs.push(run.proc);
    await until(() => run.out.stdout.includes('"listening"') || run.out.code !== undefined);
    expect(existsSync(join(fromFlag, 'admin-api-key')), run.out.stderr).toBe(true);
    expect(existsSync(fromEnv)).toBe(false);
    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('exits 2 with a message for bad flags', { timeout: 90_000 }, async () => {
    for (const args of [['--listen', 'nowhere'], ['--listen', '127.0.0.1:99999'], ['--log-level', 'loud'], ['--no-such-flag']]) {
      const run = launch([...args, '--data-dir', join(base, 'never')], { MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD });
      procs.push(run.proc);
      expect(await run.exited, args.join(' ')).toBe(2);
      expect(run.out.stderr.length, args.join(' ')).toBeGreaterThan(0);
    }
    expect(existsSync(join(base, 'never'))).toBe(false);
  });

  it('exits 1 with a hint when the port is taken', { timeout: 90_000 }, async () => {
    const port = (busy.address() as { port: number }).port;
    const run = launch(['--listen', `127.0.0.1:${port}`, '--edge-listen', '127.0.0.1:0', '--data-dir', join(base, 'busy')], {
      MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    procs.push(run.proc);
    expect(await run.exited).toBe(1);
    expect(run.out.stderr).toMatch(/EADDRINUSE.*another daemon/);
  });
});
