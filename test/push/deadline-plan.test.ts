import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resourceValues } from '../../daemon/monitoring/resource-create.ts';
import { deadlinesQuery } from '../../daemon/push/deadline-store.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { dropDatabaseFor, onPostgres, openTestStore } from '../helpers/test-database.ts';

/**
 * The push deadlines are re-read for every resource a bulk create or update touches. SQLite,
 * without statistics, planned that read as a walk over every active resource (0.1 s a call at
 * 200,000 resources, seconds of a stalled event loop per batch): the plan must start at push_checks.
 */
let dir: string;
let store: OpenedStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-deadline-plan-'));
  store = await openTestStore(dir);
  const ctx = { installSecret: new Uint8Array(32).fill(7) };
  const rows = Array.from({ length: 600 }, (_, i) =>
    resourceValues(ctx, { name: `r${i}`, resourceType: 'HTTP', target: 'http://127.0.0.1:9/' } as never, 'http://127.0.0.1:9/', 1_000),
  );
  for (let i = 0; i < rows.length; i += 200)
    await store.db
      .insertInto('resources')
      .values(rows.slice(i, i + 200))
      .execute();
});

afterAll(async () => {
  await store?.close();
  await dropDatabaseFor(dir);
  rmSync(dir, { recursive: true, force: true });
});

it.skipIf(onPostgres())('reads push_checks first, and resources only by id', async () => {
  for (const ids of [Array.from({ length: 500 }, (_, i) => i + 1), undefined]) {
    const steps = await plan(ids);
    expect(steps[0], steps.join(' / ')).toMatch(/^(SCAN|SEARCH) p\b/);
    expect(steps.slice(1).join(' / ')).toMatch(/^SEARCH r USING INTEGER PRIMARY KEY/);
  }
});

/** The plan with the ids bound: EXPLAIN takes the statement's parameters. */
async function plan(ids?: number[]): Promise<string[]> {
  const q = deadlinesQuery(store.db, ids).compile();
  const result = await store.db.executeQuery<{ detail: string }>({ ...q, sql: `EXPLAIN QUERY PLAN ${q.sql}` });
  return result.rows.map((r) => r.detail);
}
