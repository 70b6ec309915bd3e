import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { freePort } from '../helpers/free-port.ts';

const base = mkdtempSync(join(tmpdir(), 'monctl-reconnect-'));
let d: TestDaemon | undefined;
afterAll(async () => {
  await d?.stop();
  rmSync(base, { recursive: true, force: true });
});

it('a piped topology --watch says it is reconnecting and resumes after a daemon restart', async () => {
  const port = await freePort();
  const opts = { dataDir: join(base, 'data'), args: ['--listen', `127.0.0.1:${port}`] };
  d = await startDaemon(opts);
  const key = d.adminKey;
  const child = spawn(join(ROOT, 'bin/monctl'), ['topology', '--watch'], {
    env: { ...process.env, MONCTL_SERVER: d.url, MONCTL_API_KEY: key, MONCTL_CONFIG_DIR: base },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const kinds = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).event as string);
  try {
    await until(() => kinds().includes('SNAPSHOT'));
    await d.stop();
    await until(() => /reconnecting/.test(err));
    d = await startDaemon(opts);
    const agent = await d.admin.call(operations.createAgent, { body: { name: 'after-restart' } });
    await until(() => out.includes('"after-restart"'));
    expect(kinds().filter((k) => k === 'SNAPSHOT').length).toBeGreaterThanOrEqual(1);
    expect(agent.name).toBe('after-restart');
  } finally {
    child.kill('SIGINT');
  }
}, 60_000);
