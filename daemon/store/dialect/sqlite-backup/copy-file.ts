import SqliteDatabase from 'better-sqlite3';

/**
 * The copy of `monctl daemon backup`, a process of its own beside the daemon:
 * SQLite's online backup API on a second connection. A write by another
 * connection restarts a stepped backup, and a busy daemon writes every second,
 * so the whole file is copied in one step: one read transaction, a consistent
 * snapshot that WAL lets the daemon keep writing past. Blocking this process
 * for that step blocks nothing else.
 */
export function copyFromFile(dbFile: string): (temp: string) => Promise<void> {
  return async (temp) => {
    const source = new SqliteDatabase(dbFile, { fileMustExist: true });
    try {
      source.pragma('busy_timeout = 5000');
      await source.backup(temp, { progress: ({ totalPages }) => totalPages + 1 });
    } finally {
      source.close();
    }
  };
}
