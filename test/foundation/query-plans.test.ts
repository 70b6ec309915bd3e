import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, type Kysely, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDependents } from '../../daemon/alerts/delivery/dependents.ts';
import { dependencyHolds, reopenDependents } from '../../daemon/alerts/routing/dependency-holds.ts';
import type { AlertItem } from '../../daemon/alerts/types.ts';
import { resourceValues } from '../../daemon/monitoring/resource-create.ts';
import { LATEST_ROWS, latestText } from '../../daemon/probes/latest-update.ts';
import { NEXT_RUNS_ROWS, nextRunsText } from '../../daemon/probes/next-runs.ts';
import { countLate, readDeadlines } from '../../daemon/push/deadline-store.ts';
import type { Database } from '../../daemon/store/schema.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';

/**
 * SQLite plans without statistics (the daemon never runs ANALYZE), so an index whose first column
 * has two values looks as selective as a key. `resources_next_run` (`active`, …) made every query
 * on active resources walk all of them: at a million resources, a second per bulk create in the
 * push deadlines' re-read, per incident opening in the dependency lookups. These are the queries
 * that run per batch or per incident; each must reach `resources` by its key, never by a scan.
 */
let dir: string;
let store: OpenedStore;
const N = 600;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-plans-'));
  store = await openStore(dir);
  const ctx = { installSecret: new Uint8Array(32).fill(7) };
  const target = 'http://127.0.0.1:9/';
  const rows = Array.from({ length: N }, (_, i) =>
    resourceValues(ctx, { name: `r${i}`, resourceType: 'HTTP', target } as never, target, 1_000),
  );
  for (let i = 0; i < N; i += 200)
    await store.db
      .insertInto('resources')
      .values(rows.slice(i, i + 200))
      .execute();
  // r2 … r20 each depend on the one before.
  await store.db
    .insertInto('resource_dependencies')
    .values(Array.from({ length: 19 }, (_, i) => ({ resource_id: i + 2, depends_on_id: i + 1 })))
    .execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` on a db that records every statement it sends, and returns their plans. */
async function plansOf(fn: (db: Kysely<Database>) => Promise<unknown>): Promise<Array<{ sql: string; plan: string[] }>> {
  const seen: CompiledQuery[] = [];
  const executor = store.db.getExecutor();
  const recorder: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => {
      seen.push(executor.compileQuery(node, queryId));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  await fn(store.db.withPlugin(recorder));
  const out = [];
  for (const q of seen.filter((q) => /\bresources\b/.test(q.sql))) {
    const rows = await store.db.executeQuery<{ detail: string }>({ ...q, sql: `EXPLAIN QUERY PLAN ${q.sql}` });
    out.push({ sql: q.sql, plan: rows.rows.map((r) => r.detail) });
  }
  return out;
}

const ids = Array.from({ length: 256 }, (_, i) => i + 1);
const opening = (id: number): AlertItem =>
  ({ kind: 'INCIDENT_OPENED', subject: { type: 'resource', id, name: `r${id - 1}` }, eventId: id, at: 1 }) as unknown as AlertItem;
const event = (id: number) => ({
  id,
  kind: 'INCIDENT_OPENED',
  resource_id: id,
  incident_id: id,
  suppressed: null,
  created_at: 1,
  payload: '{}',
});

describe('queries that run per batch or per incident reach resources by key', () => {
  const cases: Array<[string, (db: Kysely<Database>) => Promise<unknown>]> = [
    ['readDeadlines of ids (every bulk create)', (db) => readDeadlines(db, ids)],
    ['readDeadlines, all (start)', (db) => readDeadlines(db)],
    ['countLate (each scrape)', (db) => countLate(db)],
    ['addDependents (each alert batch with an opening)', (db) => addDependents(db, ids.map(opening))],
    ['dependencyHolds (each routing pass)', (db) => dependencyHolds(db, ids.map(event))],
    ['reopenDependents (a dependency resolved)', (db) => db.transaction().execute((trx) => reopenDependents(trx, ids, 1))],
  ];
  it.each(cases)('%s', async (_, fn) => {
    const plans = await plansOf(fn);
    expect(plans.length).toBeGreaterThan(0);
    for (const { sql, plan } of plans) {
      const steps = plan.filter((s) => /\b(resources|r)\b/.test(s));
      expect(steps.length, sql).toBeGreaterThan(0);
      for (const step of steps)
        expect(step, `${sql}\n${plan.join(' / ')}`).toMatch(/USING INTEGER PRIMARY KEY|USING INDEX resources_name_unique/);
    }
  });
});

/** The writer's statements per check (raw SQL, past kysely's plugins): `UPDATE … FROM (VALUES …)` must loop over the list. */
describe('the per-check UPDATE … FROM (VALUES …) statements reach resources by key', () => {
  const cases: Array<[string, string, number]> = [];
  for (const rows of [1, 64, NEXT_RUNS_ROWS]) cases.push([`next runs, ${rows} rows`, nextRunsText(rows, false), 2 * rows]);
  for (const rows of [1, LATEST_ROWS]) cases.push([`latest columns, ${rows} rows`, latestText(rows, false), 17 * rows]);
  it.each(cases)('%s', async (_, sql, params) => {
    const parameters = Array.from({ length: params }, (_, i) => i + 1);
    const rows = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${sql}`, parameters));
    const steps = rows.rows.map((r) => r.detail);
    expect(
      steps.filter((s) => /\bresources\b/.test(s)),
      steps.join(' / '),
    ).toEqual(['SEARCH resources USING INTEGER PRIMARY KEY (rowid=?)']);
  });
});
