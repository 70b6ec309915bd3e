import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { StorageError } from '../storage-error.ts';
import type { StorageHealth } from '../storage-health.ts';

/** SQLite's result codes (extended ones included) that mean a full disk or a damaged file. */
export function storageErrorOf(err: unknown): StorageError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL') return new StorageError('full', code, err);
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return new StorageError('corrupt', code, err);
  return undefined;
}

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

/**
 * kysely's SQLite dialect with two changes:
 * - Transactions begin IMMEDIATE. A deferred transaction reads first and asks
 *   for the write lock later; if another connection (a second process such as
 *   `monctl daemon reset-admin`) wrote in between, SQLite fails it at once
 *   with SQLITE_BUSY instead of waiting, since waiting could deadlock.
 *   IMMEDIATE takes the write lock at BEGIN, where busy_timeout waits.
 * - Full-disk and corruption errors become StorageError, and the outcome of
 *   writes is reported to StorageHealth.
 */
export class WatchedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #health: StorageHealth;
  readonly #inTransaction: () => boolean;
  constructor(config: SqliteDialectConfig, health: StorageHealth, inTransaction: () => boolean) {
    super(config);
    this.#config = config;
    this.#health = health;
    this.#inTransaction = inTransaction;
  }

  override createDriver(): Driver {
    return new WatchedSqliteDriver(this.#config, this.#health, this.#inTransaction);
  }
}

class WatchedSqliteDriver extends SqliteDriver {
  readonly #health: StorageHealth;
  readonly #inTransaction: () => boolean;
  #watched: DatabaseConnection | undefined;
  constructor(config: SqliteDialectConfig, health: StorageHealth, inTransaction: () => boolean) {
    super(config);
    this.#health = health;
    this.#inTransaction = inTransaction;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection(); // one connection behind a mutex
    this.#watched ??= this.#watch(inner);
    return this.#watched;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite rolls a transaction back by itself on some errors (SQLITE_FULL among them);
   * a ROLLBACK then fails with "no transaction is active", which would replace the real error.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#inTransaction()) await super.rollbackTransaction(connection);
  }

  #watch(inner: DatabaseConnection): DatabaseConnection {
    const fail = (err: unknown): never => {
      const storage = storageErrorOf(err);
      if (storage) this.#health.failed(storage);
      throw storage ?? err;
    };
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        let result: QueryResult<R>;
        try {
          result = await inner.executeQuery<R>(query);
        } catch (err) {
          return fail(err);
        }
        // Committed: an autocommit write, or the COMMIT of a transaction.
        if (!this.#inTransaction() && (WRITES.has(query.query.kind) || /^\s*commit\b/i.test(query.sql))) this.#health.wrote();
        return result;
      },
      streamQuery: async function* <R>(query: CompiledQuery, chunkSize?: number) {
        try {
          yield* inner.streamQuery<R>(query, chunkSize);
        } catch (err) {
          fail(err);
        }
      },
    };
  }
}
