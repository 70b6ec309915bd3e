import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * Everything SQLite-specific lives here: opening the file, pragmas, integrity
 * checks. The rest of the daemon speaks kysely only, so that a PostgreSQL
 * dialect module can stand beside this one.
 *
 * Single writer: better-sqlite3 is one synchronous connection and kysely's
 * SQLite driver runs one query at a time on it, so writes never interleave;
 * batch writers group their rows into one transaction.
 */
export interface OpenedStore {
  db: Kysely<Database>;
  /** `PRAGMA integrity_check`, for tests and `monctl daemon --check`. */
  integrityCheck(): string;
  close(): Promise<void>;
}

export function openSqlite(file: string): OpenedStore {
  const raw = new SqliteDatabase(file);
  // WAL: readers never block the writer. synchronous=NORMAL in WAL mode keeps
  // every committed transaction across a process crash (SIGKILL); only an OS
  // crash may lose the last few.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  return {
    db,
    integrityCheck: () => String(raw.pragma('integrity_check', { simple: true })),
    async close() {
      await db.destroy(); // closes `raw` as well
    },
  };
}

type RawDatabase = InstanceType<typeof SqliteDatabase>;
type Statement = ReturnType<RawDatabase['prepare']>;

/**
 * kysely's SQLite driver prepares every statement anew, which was the largest
 * single cost of an API read. The SQL kysely generates for one query shape is
 * the same string every time (values are bound parameters), so prepared
 * statements are cached by SQL text, least recently used evicted. Reuse is
 * safe because the driver runs one query at a time on this connection.
 */
/** Statements longer than this (multi-row batches) are not cached. */
const MAX_CACHED_SQL = 2_048;

function withStatementCache(raw: RawDatabase, capacity = 500) {
  const cache = new Map<string, Statement>();
  return {
    close: () => raw.close(),
    prepare(sql: string): Statement {
      // Multi-row batches (check results, route-log entries, CASE updates) have a different SQL
      // text per batch size and large compiled programs: cached, hundreds of them piled up in
      // native memory (the soak's RSS crept by 7 MB/min). They run once per batch, so
      // preparing them each time costs little.
      if (sql.length > MAX_CACHED_SQL) return raw.prepare(sql);
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-insert: Map order is least recently used first
      } else {
        statement = raw.prepare(sql);
        if (cache.size >= capacity) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}
