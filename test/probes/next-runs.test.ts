import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resourceValues } from '../../daemon/monitoring/resource-create.ts';
import { persistNextRuns } from '../../daemon/probes/next-runs.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { dropDatabaseFor, openTestStore } from '../helpers/test-database.ts';

/** persistNextRuns on the current backend: 300 rows (a full 256-row statement and a partial one), the others untouched. */
let dir: string;
let store: OpenedStore;
const ctx = { installSecret: new Uint8Array(32).fill(7) };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-next-runs-'));
  store = await openTestStore(dir);
  const rows = Array.from({ length: 310 }, (_, i) =>
    resourceValues(ctx, { name: `r${i}`, resourceType: 'TCP', target: '127.0.0.1:9', intervalSeconds: 60 } as never, '127.0.0.1:9', 1_000),
  );
  await store.db.insertInto('resources').values(rows).execute();
});

afterAll(async () => {
  await store?.close();
  await dropDatabaseFor(dir);
  rmSync(dir, { recursive: true, force: true });
});

it('writes next_run_at of the resources given, to the millisecond, and of no other', async () => {
  const all = await store.db.selectFrom('resources').select(['id', 'next_run_at']).orderBy('id').execute();
  const runs = new Map(all.slice(0, 300).map((r, i) => [Number(r.id), 1_800_000_000_000 + i * 1_000 + 0.4]));
  await persistNextRuns(store.db, runs);
  const after = await store.db.selectFrom('resources').select(['id', 'next_run_at']).orderBy('id').execute();
  after.slice(0, 300).forEach((r, i) => expect(Number(r.next_run_at)).toBe(1_800_000_000_000 + i * 1_000));
  expect(after.slice(300).map((r) => r.next_run_at)).toEqual(all.slice(300).map((r) => r.next_run_at));
});
