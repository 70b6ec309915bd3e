import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';
import { openDb, type DbHandle } from '../helpers/test-database.ts';
import { switchableTarget } from './world.ts';

let d: TestDaemon;
let target: Awaited<ReturnType<typeof switchableTarget>>;
let db: DbHandle;
const ids = { on: 0, off: 0 };

beforeAll(async () => {
  [d, target] = await Promise.all([startDaemon(), switchableTarget()]);
  const a = d.admin;
  const group = (await a.call(operations.createGroup, { body: { name: 'Shown', visibility: 'PUBLIC' } })).id;
  const other = (await a.call(operations.createGroup, { body: { name: 'Elsewhere', visibility: 'PUBLIC' } })).id;
  const resource = async (name: string, groupIds: number[]) =>
    (
      await a.call(operations.createResource, {
        body: { name, resourceType: 'HTTP', target: target.url(name), intervalSeconds: 3600, groupIds },
      })
    ).id;
  ids.on = await resource('on', [group]);
  ids.off = await resource('off', [other]);
  await until(async () => (await a.call(operations.listAdminResources)).every((r) => r.latestCheckedAt !== null));
  await a.call(operations.createStatusPage, { body: { slug: 'scope', title: 'Scope', groupIds: [group] } });
  db = await openDb(d);
});
afterAll(async () => {
  await db?.close();
  await d?.stop();
  target?.close();
});

/** The names and statuses of the page's resources, as its cached JSON view shows them. */
async function shown(): Promise<string[]> {
  const res = await send(d.url, 'GET', '/api/status-pages/scope/summary');
  expect(res.status).toBe(200);
  const summary = res.json() as { groups: Array<{ resources: Array<{ name: string; currentStatus: string }> }> };
  return summary.groups.flatMap((g) => g.resources.map((r) => `${r.name}:${r.currentStatus}`));
}

/** Renames a resource behind the daemon's back: only a page built again shows the new name. */
const renameQuietly = (id: number, name: string) => db.query('UPDATE resources SET name = ? WHERE id = ?', name, id);

describe('status page caches and the checks of resources on no page', () => {
  it('keeps the page cached through status changes of a resource it does not show, and rebuilds it on one it shows', async () => {
    // Each attempt: the page cached, renamed underneath, then the other resource changes status. The first attempts
    // may meet the daemon still reading which resources the pages show (every change counts then), so try again.
    let attempt = 0;
    let kept = false;
    while (!kept) {
      expect(attempt, 'a status change of a resource on no page dropped the cached page every time').toBeLessThan(30);
      const before = await shown();
      await renameQuietly(ids.on, `on-${++attempt}`);
      if (!isDeepEqual(await shown(), before)) continue; // the cached view expired meanwhile
      target.set('off', attempt % 2 ? 503 : 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.off } });
      kept = isDeepEqual(await shown(), before);
    }
    // A resource the page shows: its change reaches the page (built again, so the quiet rename shows too).
    target.set('on', 503);
    await d.admin.call(operations.checkResource, { params: { id: ids.on } });
    await until(async () => (await shown()).includes(`on-${attempt}:not_available`));
  }, 30_000);
});

const isDeepEqual = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
