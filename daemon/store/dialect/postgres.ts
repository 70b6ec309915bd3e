import { Kysely, sql } from 'kysely';
import pg from 'pg';
import type { OpenedStore } from '../opened-store.ts';
import type { Database } from '../schema.ts';
import { StorageHealth } from '../storage-health.ts';
import { storageErrorOfPg, WatchedPostgresDialect } from './postgres-driver.ts';
import { PostgresListener } from './postgres-listen.ts';

/** Connections per pod: requests, the scheduler's batches, the alert loops; the listener has its own. */
const POOL_SIZE = 10;
/** How often the store asks the server whether it is there, and how long an answer may take. */
const WATCH_MS = 2_000;
const WATCH_TIMEOUT_MS = 5_000;

/**
 * bigint columns (ids, epoch milliseconds, counts) arrive as numbers: every
 * value monctl keeps fits in 2^53, and the daemon's code (written for
 * SQLite, which returns numbers) compares them as numbers. numeric stays text.
 */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** `postgres://user@host:port/db`, without the password: for logs and health. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL ${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host || 'localhost'}${u.pathname || '/'}`;
  } catch {
    return 'PostgreSQL';
  }
}

/**
 * Everything PostgreSQL-specific: the pool (pg), the watched dialect, the
 * liveness watch, and LISTEN/NOTIFY between pods. Several daemons share the
 * database; transactions are READ COMMITTED, and the daemon's cross-pod
 * claims are conditional updates (or FOR UPDATE SKIP LOCKED), never
 * read-then-write.
 */
export async function openPostgres(url: string, appName = 'monctl'): Promise<OpenedStore> {
  const config: pg.PoolConfig = {
    connectionString: url,
    types,
    application_name: appName,
    keepAlive: true,
    connectionTimeoutMillis: WATCH_TIMEOUT_MS,
    max: POOL_SIZE,
    idleTimeoutMillis: 30_000,
  };
  const pool = new pg.Pool(config);
  const health = new StorageHealth();
  // An idle client that dies (server restart) must not become an uncaught 'error'.
  const lost = (err: Error) => {
    const storage = storageErrorOfPg(err);
    if (storage) health.failed(storage);
  };
  pool.on('error', lost);
  // The pool listens to its idle clients only: a client checked out between two
  // queries (inside a transaction) emits 'error' with no listener when the server
  // dies, an uncaught exception that ends the pod. Every client gets one for life;
  // its next query fails (not queryable) and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', lost));
  const db = new Kysely<Database>({ dialect: new WatchedPostgresDialect({ pool }, health) });
  try {
    await sql`select 1`.execute(db); // fail the start now, with the server's own message
  } catch (err) {
    await db.destroy().catch(() => {});
    throw new Error(`cannot open the PostgreSQL database ${describePostgresUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
  const listener = new PostgresListener(
    config,
    async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    (err) => {
      const storage = storageErrorOfPg(err);
      if (storage) health.failed(storage);
    },
  );
  await listener.start();
  const stopWatch = watchLiveness(db, health);
  return {
    db,
    dialect: 'postgres',
    location: describePostgresUrl(url),
    health,
    notifications: listener,
    async close() {
      stopWatch();
      await listener.close();
      await db.destroy();
    },
  };
}

/**
 * A pod must notice a lost database even when nothing else queries it (no
 * requests, no checks due): `select 1` every WATCH_MS, bounded by
 * WATCH_TIMEOUT_MS, so that a server that stopped answering (not only one
 * that refuses) turns health DOWN too.
 */
function watchLiveness(db: Kysely<Database>, health: StorageHealth): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    let late: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      late = setTimeout(() => reject(Object.assign(new Error('no answer from the database'), { code: 'ETIMEDOUT' })), WATCH_TIMEOUT_MS);
    });
    Promise.race([sql`select 1`.execute(db), timeout])
      .catch((err) => {
        const storage = storageErrorOfPg(err);
        if (storage) health.failed(storage);
      })
      .finally(() => {
        clearTimeout(late);
        busy = false;
      });
  }, WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
