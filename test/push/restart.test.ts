import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem } from '../helpers/http.ts';
import { clockRequest } from '../helpers/test-clock.ts';
import { dropDatabaseFor } from '../helpers/test-database.ts';
import { lateAt, missedEntries, pushResource, until } from './deadline-helpers.ts';

/**
 * A deadline that passes while the daemon is down is judged when it starts again
 * (docs/API.md#push-checks). The daemon runs on the wall clock here (a test clock starts at the
 * wall clock on each start, so it cannot stand for the time the daemon was down): the check has
 * the shortest period (10 s) and no grace, and the daemon starts again once it has passed.
 */
const base = mkdtempSync(join(tmpdir(), 'monctl-push-restart-'));
const dataDir = join(base, 'data');
let d: TestDaemon | undefined;
afterAll(async () => {
  await d?.stop();
  await dropDatabaseFor(dataDir);
  rmSync(base, { recursive: true, force: true });
});

it('a deadline passed while the daemon was down is judged at start; one still ahead is not', async () => {
  d = await startDaemon({ dataDir });
  // Without --test-clock the clock cannot be moved.
  const refused = expectProblem(await clockRequest(d, { advanceSeconds: 60 }), 404);
  expect(refused.detail).toContain('--test-clock on');

  const short = await pushResource(d, 'every-10s', { periodSeconds: 10, graceSeconds: 0 });
  const ahead = await pushResource(d, 'hourly', { periodSeconds: 3600, graceSeconds: 0 });
  const late = await lateAt(d, short);
  expect(await d.stop()).toBe(0);
  d = undefined;
  // The daemon is down while the deadline passes (the one wait of this test: the deadline is wall time).
  await new Promise((r) => setTimeout(r, Math.max(0, late - Date.now() + 50)));

  const startedAt = Date.now();
  d = await startDaemon({ dataDir });
  const entry = await until('the deadline judged at start', async () => (await missedEntries(d!, short))[0]);
  expect(entry.checkedAt).toBeGreaterThanOrEqual(startedAt);
  expect(entry.message).toMatch(/^no ping yet; expected by \S+Z plus 0s grace$/);
  const started = d.logs.find((l) => l.msg === 'push deadline judge started');
  expect(started).toMatchObject({ deadlines: 2, due: 1 });
  console.log(`judged ${entry.checkedAt - startedAt} ms after the restart began, ${entry.checkedAt - late} ms after the deadline`);
  expect(await missedEntries(d, ahead)).toEqual([]);
}, 60_000);
