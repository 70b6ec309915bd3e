import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { StorageHealth } from './storage-health.ts';

export type StoreDialect = 'sqlite' | 'postgres';

/**
 * Notifications between the pods of one PostgreSQL database (LISTEN/NOTIFY).
 * Delivery is at most once: a pod whose listening connection dropped may have
 * missed some, and is told through `onGap` once it listens again, so that it
 * can drop what it cached.
 */
export interface PodNotifications {
  /** Delivers each payload sent on `channel` (by any pod, this one included). */
  listen(channel: string, handler: (payload: string) => void): () => void;
  /** Sends a payload (at most 7,900 bytes) to every pod listening on `channel`. */
  notify(channel: string, payload: string): Promise<void>;
  /** Called after the listening connection was lost and is back. */
  onGap(handler: () => void): () => void;
}

/** An open database, whichever the dialect. The rest of the daemon speaks kysely only. */
export interface OpenedStore {
  db: Kysely<Database>;
  dialect: StoreDialect;
  /** For logs and health: the SQLite file, or the PostgreSQL host and database (never a password). */
  location: string;
  /** Full disk, corruption and an unreachable server as the store's queries met them (for health). */
  health: StorageHealth;
  /** SQLite: `PRAGMA integrity_check`, for tests and `monctl daemon check`. */
  integrityCheck?(): string;
  /**
   * SQLite: an online backup into `file` on the daemon's own connection, in
   * steps, so the event loop is not held; its own writes meanwhile update the
   * copy rather than restart it. Aborted through `signal`.
   */
  backup?(file: string, signal?: AbortSignal): Promise<void>;
  /** PostgreSQL only: notifications between the pods sharing the database. */
  notifications?: PodNotifications;
  close(): Promise<void>;
}
