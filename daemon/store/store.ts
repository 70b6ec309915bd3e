import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { openSqlite, type OpenedStore } from './dialect/sqlite.ts';
import { migrationProvider } from './migrations/index.ts';
import { probeWritesWhileDegraded } from './write-probe.ts';

export type { OpenedStore };

/** Opens `<data-dir>/monctl.db` (mode 0600) and brings its schema up to date. */
export async function openStore(dataDir: string): Promise<OpenedStore> {
  const file = join(dataDir, 'monctl.db');
  const fresh = !existsSync(file);
  const store = openSqlite(file);
  if (fresh) chmodSync(file, 0o600);
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
