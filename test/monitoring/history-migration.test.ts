import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../daemon/store/migrations/index.ts';
import type { OpenedStore } from '../../daemon/store/opened-store.ts';
import { databaseFor } from '../helpers/test-database.ts';
import { insertResources } from '../probes/helpers/context.ts';

// Migration 0029 on a database that has history in the old layout (SQLite, or PostgreSQL in that
// project): every row stays with its id and its outcome, `changed` marks the status changes, the
// hours get their first ids, and new ids continue after every id the old table gave.
let dir: string;
let store: OpenedStore;

async function open(dataDir: string): Promise<OpenedStore> {
  const url = await databaseFor(dataDir);
  if (url) return (await import('../../daemon/store/dialect/postgres.ts')).openPostgres(url);
  return (await import('../../daemon/store/dialect/sqlite.ts')).openSqlite(join(dataDir, 'monctl.db'));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-history-migration-'));
  store = await open(dir);
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;

describe('migration 0029 (compact history)', () => {
  it('keeps every row, its id and its outcome', async () => {
    const db = store.db as Kysely<any>;
    const migrator = new Migrator({ db, provider: migrationProvider });
    const to28 = await migrator.migrateTo('0028-identity');
    expect(to28.error).toBeUndefined();
    const now = Date.UTC(2026, 10, 20, 10, 0, 0);
    const ids = await insertResources({ db }, [{ target: 'http://127.0.0.1/' }, { target: 'http://127.0.0.1/' }]);
    const [a, b] = ids;
    const old = [
      { resource_id: a, status: 'AVAILABLE', message: '200 OK', error_code: null, checked_at: now, duration_ms: 5 },
      { resource_id: b, status: 'NOT_AVAILABLE', message: 'refused', error_code: 'CONNECTION_ERROR', checked_at: now + 1, duration_ms: 7 },
      { resource_id: a, status: 'AVAILABLE', message: '200 OK', error_code: null, checked_at: now + HOUR, duration_ms: 6 },
      { resource_id: a, status: 'NOT_AVAILABLE', message: '503', error_code: '503', checked_at: now + HOUR + 1, duration_ms: 8 },
      {
        resource_id: b,
        status: 'NOT_AVAILABLE',
        message: 'refused',
        error_code: 'CONNECTION_ERROR',
        checked_at: now + 2 * HOUR,
        duration_ms: 9,
      },
      {
        resource_id: a,
        status: 'AVAILABLE',
        message: null,
        error_code: null,
        checked_at: now + 2 * HOUR,
        duration_ms: 1,
        location: 'office',
      },
    ];
    const written = await db.insertInto('check_history').values(old).returning('id').execute();
    // The newest row deleted: its id is never given again.
    const last = Number(written[written.length - 1].id);
    await db.deleteFrom('check_history').where('id', '=', last).execute();

    const latest = await migrator.migrateToLatest();
    expect(latest.error).toBeUndefined();
    const rows = await db
      .selectFrom('check_history')
      .innerJoin('check_outcomes', 'check_outcomes.id', 'check_history.outcome_id')
      .leftJoin('check_details', 'check_details.history_id', 'check_history.id')
      .select(['check_history.id', 'resource_id', 'status', 'message', 'error_code', 'checked_at', 'duration_ms', 'changed', 'location'])
      .orderBy('check_history.id')
      .execute();
    expect(rows.map((r) => ({ ...r, id: Number(r.id), checked_at: Number(r.checked_at), changed: Number(r.changed) }))).toEqual(
      old.slice(0, 5).map((o, i) => ({
        location: null,
        ...o,
        id: Number(written[i].id),
        changed: [1, 1, 0, 1, 0][i],
      })),
    );
    // Each distinct (status, error code, message) once: 200 OK, refused, 503.
    expect(
      Number(
        (
          await db
            .selectFrom('check_outcomes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(3);
    const hours = await db.selectFrom('history_hours').select(['hour_start', 'first_id']).orderBy('hour_start').execute();
    expect(hours.map((h) => [Number(h.hour_start), Number(h.first_id)])).toEqual([
      [now, Number(written[0].id)],
      [now + HOUR, Number(written[2].id)],
      [now + 2 * HOUR, Number(written[4].id)],
    ]);
    const next = await db
      .insertInto('check_history')
      .values({ resource_id: a, outcome_id: 1, checked_at: now + 3 * HOUR, duration_ms: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(Number(next.id)).toBeGreaterThan(last);
  });
});
