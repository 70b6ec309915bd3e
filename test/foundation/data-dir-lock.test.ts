import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../daemon/store/store.ts';
import { runMonctl } from '../cli/run.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { runDaemonToExit } from '../helpers/daemon-exit.ts';
import { bearer, send } from '../helpers/http.ts';

const base = mkdtempSync(join(tmpdir(), 'monctl-lock-'));
const daemons: TestDaemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

/** Runs the fixture writer as its own process, the way a second program shares the file. */
function writer(dataDir: string, tag: string, count: number): Promise<{ ok: number; errors: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(ROOT, 'node_modules/.bin/node'),
      [join(ROOT, 'test/foundation/fixtures/store-writer.ts'), dataDir, tag, String(count)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`writer exited ${code}: ${err}`))));
  });
}

describe('one daemon per data directory', () => {
  it("refuses a second daemon on the same data dir with exit 1, naming the holder's PID", { timeout: 60_000 }, async () => {
    const dataDir = join(base, 'two');
    const first = await startDaemon({ dataDir });
    daemons.push(first);
    expect(readFileSync(join(dataDir, 'monctl.lock')).subarray(0, 15).toString()).toBe('SQLite format 3');
    const second = await runDaemonToExit(dataDir);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`in use by another monctl daemon (PID ${first.proc.pid}`);
    expect(second.stderr).toContain('PostgreSQL');
    // The first one is untouched.
    expect((await send(first.url, 'GET', '/api/me', { headers: bearer(first.adminKey) })).status).toBe(200);
    // reset-admin shares the data dir with a running daemon: it takes no lock.
    const reset = await runMonctl(['daemon', 'reset-admin', '--data-dir', dataDir], {
      env: { MONCTL_ADMIN_PASSWORD: 'another-admin-password' },
    });
    expect(reset.code, reset.stderr).toBe(0);
    expect(await first.stop()).toBe(0);
    // A clean stop releases the lock.
    const again = await startDaemon({ dataDir });
    daemons.push(again);
    expect(await again.stop()).toBe(0);
  });

  it('a daemon killed with SIGKILL leaves no stale lock: the next one starts', { timeout: 60_000 }, async () => {
    const dataDir = join(base, 'killed');
    const first = await startDaemon({ dataDir });
    daemons.push(first);
    await first.stop('SIGKILL');
    const next = await startDaemon({ dataDir });
    daemons.push(next);
    expect((await send(next.url, 'GET', '/actuator/health')).json()).toEqual({ status: 'UP' });
    expect(await next.stop()).toBe(0);
  });
});

describe('write transactions begin IMMEDIATE', () => {
  it('two processes that read then write in transactions on one file never get SQLITE_BUSY', { timeout: 120_000 }, async () => {
    const dataDir = join(base, 'writers');
    mkdirSync(dataDir);
    await (await openStore(dataDir)).close(); // migrated once, before the writers race
    const [a, b] = await Promise.all([writer(dataDir, 'a', 400), writer(dataDir, 'b', 400)]);
    expect({ a, b }).toEqual({ a: { ok: 400, errors: {} }, b: { ok: 400, errors: {} } });
  });
});
