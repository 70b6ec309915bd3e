import SqliteDatabase from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { OpenedStore } from '../opened-store.ts';
import type { Database } from '../schema.ts';
import { StorageHealth } from '../storage-health.ts';
import { WatchedSqliteDialect } from './sqlite-driver.ts';

export type { OpenedStore };

/**
 * Everything SQLite-specific lives here: opening the file, pragmas, integrity
 * checks. The rest of the daemon speaks kysely only; postgres.ts stands beside
 * this one.
 *
 * Single writer: better-sqlite3 is one synchronous connection and kysely's
 * SQLite driver runs one query at a time on it, so writes never interleave;
 * batch writers group their rows into one transaction.
 */
export function openSqlite(
  file: string,
): OpenedStore & { integrityCheck(): string; backup(file: string, signal?: AbortSignal): Promise<void> } {
  const raw = new SqliteDatabase(file);
  // WAL: readers never block the writer. synchronous=NORMAL in WAL mode keeps
  // every committed transaction across a process crash (SIGKILL); only an OS
  // crash may lose the last few.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // The page cache is native memory that fills as the database grows, up to this bound (16 MB;
  // better-sqlite3's build default, stated here so the bound is ours). The soak's RSS creep in its
  // first minutes was this cache filling: with 2 MB, malloc'd memory stayed flat.
  raw.pragma('cache_size = -16000');
  const health = new StorageHealth();
  const dialect = new WatchedSqliteDialect({ database: withStatementCache(raw) }, health, () => raw.inTransaction);
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    dialect: 'sqlite',
    location: file,
    health,
    integrityCheck: () => String(raw.pragma('integrity_check', { simple: true })),
    async backup(file, signal) {
      await raw.backup(file, {
        progress: () => {
          signal?.throwIfAborted();
          return BACKUP_PAGES_PER_STEP;
        },
      });
    },
    async close() {
      await db.destroy(); // closes `raw` as well
    },
  };
}

/** Pages an online backup copies per turn of the event loop: 1 MB at the default 4 KB page size. */
const BACKUP_PAGES_PER_STEP = 256;

type RawDatabase = InstanceType<typeof SqliteDatabase>;
type Statement = ReturnType<RawDatabase['prepare']>;

/**
 * kysely's SQLite driver prepares every statement anew, which was the largest
 * single cost of an API read. The SQL kysely generates for one query shape is
 * the same string every time (values are bound parameters), so prepared
 * statements are cached by SQL text, least recently used evicted. Reuse is
 * safe because the driver runs one query at a time on this connection.
 *
 * The cache is bounded by count and by total SQL length, which stands in for
 * the compiled programs' native memory (it grows with the text). Multi-row
 * batches come in a few fixed sizes (store/batches.ts), so their large
 * statements stay cached rather than being prepared and freed per batch.
 */
const MAX_STATEMENTS = 500;
const MAX_SQL_CHARS = 256 * 1024;

function withStatementCache(raw: RawDatabase) {
  const cache = new Map<string, Statement>();
  let chars = 0;
  return {
    close: () => raw.close(),
    prepare(sql: string): Statement {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-insert: Map order is least recently used first
        cache.set(sql, statement);
        return statement;
      }
      statement = raw.prepare(sql);
      if (sql.length > MAX_SQL_CHARS / 4) return statement; // one giant text must not flush the rest
      cache.set(sql, statement);
      chars += sql.length;
      while (cache.size > MAX_STATEMENTS || chars > MAX_SQL_CHARS) {
        const oldest = cache.keys().next().value!;
        cache.delete(oldest);
        chars -= oldest.length;
      }
      return statement;
    },
  };
}

/**
 * `PRAGMA integrity_check` on a database file, read-only (safe beside a running
 * daemon): `ok`, or one line per problem found. Throws when the file cannot be
 * opened as a database at all (SQLITE_NOTADB).
 */
export function checkSqliteFile(file: string): string[] {
  const raw = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    raw.pragma('busy_timeout = 5000');
    return (raw.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
  } finally {
    raw.close();
  }
}
