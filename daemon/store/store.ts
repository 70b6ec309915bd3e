import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import type { OpenedStore } from './opened-store.ts';
import { migrationProvider } from './migrations/index.ts';
import { probeWritesWhileDegraded } from './write-probe.ts';

export type { OpenedStore };

/**
 * Opens the daemon's database and brings its schema up to date: with a
 * `databaseUrl` (postgres://…) that PostgreSQL database, shared by every pod
 * given the same URL; else `<data-dir>/monctl.db` (mode 0600). The same
 * migrations run on both; on PostgreSQL kysely's migrator holds a lock while
 * it runs, so pods starting together migrate once.
 */
export async function openStore(dataDir: string, databaseUrl?: string): Promise<OpenedStore> {
  let store: OpenedStore;
  if (databaseUrl) {
    const { openPostgres } = await import('./dialect/postgres.ts');
    store = await openPostgres(databaseUrl);
  } else {
    const { openSqlite } = await import('./dialect/sqlite.ts');
    const file = join(dataDir, 'monctl.db');
    const fresh = !existsSync(file);
    store = openSqlite(file);
    if (fresh) chmodSync(file, 0o600);
  }
  const migrator = new Migrator({ db: store.db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await store.close();
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
  const stopProbe = probeWritesWhileDegraded(store);
  const close = store.close;
  store.close = () => {
    stopProbe();
    return close();
  };
  return store;
}
