import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../../daemon/store/store.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';

// A real daemon restarted on its data dir: every resource's next run survives
// the restart, and no check after the restart starts before it was due.
let web: Server;
let dir: string;
let daemon: TestDaemon | undefined;
const checks: number[] = [];

beforeAll(async () => {
  web = createServer((_req, res) => {
    checks.push(Date.now());
    res.end('ok');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  dir = mkdtempSync(join(tmpdir(), 'monctl-restart-'));
});

afterAll(async () => {
  await daemon?.stop();
  web.closeAllConnections();
  await new Promise((r) => web.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function nextRuns(): Promise<Map<number, number>> {
  const store = await openStore(join(dir, 'data'));
  try {
    const rows = await store.db.selectFrom('resources').select(['id', 'next_run_at']).execute();
    return new Map(rows.map((r) => [r.id, Number(r.next_run_at)]));
  } finally {
    await store.close();
  }
}

it('a restart resumes every resource on its schedule, without a burst', async () => {
  const url = `http://127.0.0.1:${(web.address() as { port: number }).port}/`;
  daemon = await startDaemon({ dataDir: join(dir, 'data') });
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await daemon.admin.raw(
      'POST',
      '/api/resources',
      JSON.stringify({ name: `r${i}`, resourceType: 'HTTP', target: url, intervalSeconds: 10 }),
    );
    ids.push(JSON.parse(res.text).id);
  }
  for (let i = 0; i < 200 && checks.length < 20; i++) await new Promise((r) => setTimeout(r, 50));
  expect(checks.length).toBe(20); // each new resource is checked once, at once
  await daemon.stop();
  daemon = undefined;

  const persisted = await nextRuns();
  const stoppedAt = Date.now();
  for (const id of ids) {
    expect(persisted.get(id)).toBeGreaterThan(stoppedAt); // the next run, a whole interval after the first check
    expect(persisted.get(id)).toBeLessThanOrEqual(stoppedAt + 10_000);
  }

  checks.length = 0;
  daemon = await startDaemon({ dataDir: join(dir, 'data') });
  const restarted = Date.now();
  const latest = Math.max(...persisted.values());
  for (let i = 0; i < 400 && checks.length < 20; i++) await new Promise((r) => setTimeout(r, 50));
  expect(checks.length).toBe(20);
  // Nothing fired at start: the first check after the restart is no earlier than the earliest persisted due time.
  expect(Math.min(...checks)).toBeGreaterThanOrEqual(Math.min(...persisted.values()));
  expect(Math.min(...checks)).toBeGreaterThanOrEqual(restarted);
  expect(Math.max(...checks)).toBeGreaterThanOrEqual(latest);
  // Results are written in batches: wait for the second entry of the first resource.
  let history: unknown[] = [];
  for (let i = 0; i < 100 && history.length < 2; i++) {
    history = JSON.parse((await daemon.admin.raw('GET', `/api/resources/${ids[0]}/history`)).text);
    if (history.length < 2) await new Promise((r) => setTimeout(r, 50));
  }
  expect(history).toHaveLength(2);
});
