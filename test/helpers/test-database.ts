import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';

/**
 * One suite, two backends: with MONCTL_TEST_DATABASE=postgres (the vitest
 * project `postgres`), every daemon a test starts gets its own fresh database
 * on the run's throw-away cluster (test/setup/postgres.ts); otherwise SQLite
 * in the daemon's data dir, as shipped.
 */
export const onPostgres = () => process.env.MONCTL_TEST_DATABASE === 'postgres';

async function adminUrl(): Promise<string> {
  const { inject } = await import('vitest');
  return inject('pgAdminUrl');
}

/** Data dir → database URL, so that a daemon restarted on the same data dir finds its database again. */
const byDataDir = new Map<string, string>();
let counter = 0;

/** A new empty PostgreSQL database on the test cluster; its URL. */
export async function createTestDatabase(): Promise<string> {
  const admin = new URL(await adminUrl());
  const name = `t${process.pid}_${++counter}_${Date.now().toString(36)}`;
  await adminQuery(admin.href, `CREATE DATABASE ${name}`);
  admin.pathname = `/${name}`;
  return admin.href;
}

/** The database URL a daemon on `dataDir` uses under the postgres project (undefined: SQLite). */
export async function databaseFor(dataDir: string): Promise<string | undefined> {
  if (!onPostgres()) return undefined;
  let url = byDataDir.get(dataDir);
  if (!url) {
    url = await createTestDatabase();
    byDataDir.set(dataDir, url);
  }
  return url;
}

/** Drops the database of a data dir that is gone for good. */
export async function dropDatabaseFor(dataDir: string): Promise<void> {
  const url = byDataDir.get(dataDir);
  if (!url) return;
  byDataDir.delete(dataDir);
  const name = new URL(url).pathname.slice(1);
  await adminQuery(await adminUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`, … (the tests write SQLite's). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** An open connection to a daemon's database, whichever it is. */
export interface DbHandle {
  /** `?` placeholders; bigint columns come back as numbers on both backends. */
  query<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction (BEGIN … COMMIT). */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens a daemon's database beside it (what it has committed so far is
 * visible): better-sqlite3 on `<dataDir>/monctl.db` (WAL lets the daemon keep
 * running), or pg on its PostgreSQL database.
 */
export async function openDb(daemon: { dataDir: string; databaseUrl?: string }): Promise<DbHandle> {
  if (daemon.databaseUrl) {
    const client = new pg.Client({ connectionString: daemon.databaseUrl, types });
    await client.connect();
    const query = async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows as T[];
    return {
      query,
      async transaction(fn) {
        await client.query('BEGIN');
        try {
          const result = await fn();
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      },
      close: () => client.end(),
    };
  }
  const db = new Database(join(daemon.dataDir, 'monctl.db'), { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const statements = new Map<string, Database.Statement>();
  return {
    async query<T>(sql: string, ...params: unknown[]) {
      let statement = statements.get(sql);
      if (!statement) statements.set(sql, (statement = db.prepare(sql)));
      return (statement.reader ? statement.all(...params) : (statement.run(...params), [])) as T[];
    },
    async transaction(fn) {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn();
        db.exec('COMMIT');
        return result;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    },
    async close() {
      db.close();
    },
  };
}

/** One query on a daemon's database (opened and closed around it): see openDb. */
export async function queryDb<T>(daemon: { dataDir: string; databaseUrl?: string }, sql: string, ...params: unknown[]): Promise<T[]> {
  const db = await openDb(daemon);
  try {
    return await db.query<T>(sql, ...params);
  } finally {
    await db.close();
  }
}

/**
 * Everything the daemon's database holds, as bytes to search (are secrets
 * stored in clear?): the SQLite files (WAL included), or every row of every
 * table of its PostgreSQL database as text.
 */
export async function databaseBytes(daemon: { dataDir: string; databaseUrl?: string }): Promise<Buffer> {
  if (!daemon.databaseUrl) {
    const files = readdirSync(daemon.dataDir).filter((f) => f.startsWith('monctl.db'));
    return Buffer.concat(files.map((f) => readFileSync(join(daemon.dataDir, f))));
  }
  const tables = await queryDb<{ name: string }>(daemon, "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await queryDb<{ row: string }>(daemon, `SELECT t::text AS row FROM "${name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return Buffer.from(parts.join('\n'));
}

/**
 * The daemon's store opened in-process on `dataDir` for the current backend
 * (migrated): SQLite in the dir, or the dir's PostgreSQL database under the
 * postgres project. Tests that drive capabilities without a daemon use it.
 */
export async function openTestStore(dataDir: string): Promise<OpenedStore> {
  return openStore(dataDir, await databaseFor(dataDir));
}
