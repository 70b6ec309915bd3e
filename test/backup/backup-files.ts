import SqliteDatabase from 'better-sqlite3';

/** Opens a backup (or a live database) read-only, for the backup tests. */
export function openCopy(file: string) {
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  return {
    integrity: () => db.pragma('integrity_check', { simple: true }),
    setting: (key: string) => (db.prepare('select value from settings where key = ?').get(key) as { value: string } | undefined)?.value,
    ids: (table: string) => new Set(db.prepare(`select id from ${table}`).pluck().all() as number[]),
    close: () => db.close(),
  };
}

/** The value of one settings row of a database file, read-only (safe beside its daemon). */
export function settingOf(file: string, key: string): string | undefined {
  const db = openCopy(file);
  try {
    return db.setting(key);
  } finally {
    db.close();
  }
}
