import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { StorageError } from '../storage-error.ts';
import type { StorageHealth } from '../storage-health.ts';

/** Node's socket errors that mean the server is out of reach. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/** node-postgres's own errors (no code) for a lost or unobtainable connection. */
const LOST = /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection ended/i;

/**
 * PostgreSQL's SQLSTATEs (and node-postgres's connection errors) that mean a
 * full disk, damaged pages, or a server out of reach: class 08 (connection
 * exception), 57P01–57P03 (shut down, crashed, starting), 53300 (too many
 * connections).
 */
export function storageErrorOfPg(err: unknown): StorageError | undefined {
  if (err instanceof StorageError) return err;
  const code = (err as { code?: unknown })?.code;
  if (code === '53100') return new StorageError('full', code, err);
  if (code === 'XX001' || code === 'XX002') return new StorageError('corrupt', code, err);
  if (
    typeof code === 'string' &&
    (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code) || NETWORK_CODES.has(code))
  ) {
    return new StorageError('unavailable', code, err);
  }
  if (code === undefined && LOST.test((err as Error)?.message ?? '')) return new StorageError('unavailable', 'CONNECTION_LOST', err);
  return undefined;
}

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

/**
 * kysely's PostgreSQL dialect, watched like the SQLite one
 * (sqlite-driver.ts): errors that mean full, corrupt or unreachable become
 * StorageError and are reported to StorageHealth, as is every success (the
 * server is reachable; a committed write means there is space again).
 */
export class WatchedPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;
  readonly #health: StorageHealth;
  constructor(config: PostgresDialectConfig, health: StorageHealth) {
    super(config);
    this.#config = config;
    this.#health = health;
  }

  override createDriver(): Driver {
    return new WatchedPostgresDriver(new PostgresDriver(this.#config), this.#health);
  }
}

/** A connection of ours around kysely's, which its driver must get back on release. */
interface Watched extends DatabaseConnection {
  inner: DatabaseConnection;
  inTransaction: boolean;
}

class WatchedPostgresDriver implements Driver {
  readonly #inner: PostgresDriver;
  readonly #health: StorageHealth;
  readonly #wrapped = new WeakMap<DatabaseConnection, Watched>();
  constructor(inner: PostgresDriver, health: StorageHealth) {
    this.#inner = inner;
    this.#health = health;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let inner: DatabaseConnection;
    try {
      inner = await this.#inner.acquireConnection();
    } catch (err) {
      return this.#fail(err);
    }
    let watched = this.#wrapped.get(inner);
    if (!watched) {
      watched = this.#watch(inner);
      this.#wrapped.set(inner, watched);
    }
    return watched;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const watched = connection as Watched;
    watched.inTransaction = false;
    return this.#inner.releaseConnection(watched.inner as Parameters<PostgresDriver['releaseConnection']>[0]);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }

  #fail(err: unknown): never {
    const storage = storageErrorOfPg(err);
    if (storage) this.#health.failed(storage);
    throw storage ?? err;
  }

  #watch(inner: DatabaseConnection): Watched {
    const health = this.#health;
    const fail = (err: unknown) => this.#fail(err);
    const watched: Watched = {
      inner,
      inTransaction: false,
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        let result: QueryResult<R>;
        try {
          result = await inner.executeQuery<R>(query);
        } catch (err) {
          return fail(err);
        }
        const raw = query.query.kind === 'RawNode' ? query.sql.trim().toLowerCase() : '';
        if (raw === 'begin' || raw.startsWith('start transaction')) watched.inTransaction = true;
        else if (raw === 'commit' || raw === 'rollback') watched.inTransaction = false;
        if (raw === 'commit' || (!watched.inTransaction && WRITES.has(query.query.kind))) health.wrote();
        else health.reached();
        return result;
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize?: number) {
        try {
          yield* inner.streamQuery<R>(query, chunkSize);
        } catch (err) {
          fail(err);
        }
      },
    };
    return watched;
  }
}
