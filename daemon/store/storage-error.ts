/**
 * A storage condition the server cannot fix by itself, translated from the
 * dialect's own error (SQLite's SQLITE_FULL, SQLITE_CORRUPT, …) so that the
 * HTTP layer and health need not know the dialect:
 * - `full`: the disk (or quota) is full; writes fail, reads work.
 * - `corrupt`: the database file is damaged; nothing read from it can be trusted.
 * - `unavailable`: the database server cannot be reached (PostgreSQL down, network,
 *   too many connections); it heals by itself once a query succeeds again.
 */
export type StorageErrorKind = 'full' | 'corrupt' | 'unavailable';

const TITLES: Record<StorageErrorKind, string> = { full: 'storage full', corrupt: 'database corrupt', unavailable: 'database unavailable' };

export class StorageError extends Error {
  readonly kind: StorageErrorKind;
  /** The dialect's or the OS's error code, e.g. SQLITE_FULL, ENOSPC. */
  readonly code: string;
  constructor(kind: StorageErrorKind, code: string, cause: unknown) {
    super(`${TITLES[kind]} (${code}): ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StorageError';
    this.kind = kind;
    this.code = code;
  }
}

/** OS error codes that mean "no space left" wherever a file write surfaces them. */
export const NO_SPACE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/**
 * Whether a failed statement broke a foreign key: SQLite's extended code, or
 * PostgreSQL's SQLSTATE 23503. Lets a batch writer insert first and look at
 * its references only when one turned out to be gone.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}
