import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { lockDataDir } from '../sqlite-lock.ts';
import { migrationProvider } from '../../migrations/index.ts';
import { BackupError, checkOpen, FINGERPRINT_KEY, fingerprintOf, keyFileOf, MIGRATIONS_TABLE, SECRET_KEY } from './backup-file.ts';

export interface RestoreOutcome {
  database: string;
  /** Where the database it replaced was kept, if there was one. */
  previous?: string;
  /** Where the secret came from. */
  secretFrom: 'backup' | 'key file';
}

/** `monctl.db.before-restore-20261128T190512Z`: UTC, sortable, no colons (they are not portable in names). */
export const previousName = (at: Date) => `monctl.db.before-restore-${at.toISOString().replace(/[-:]|\.\d+/g, '')}`;

/**
 * `monctl daemon restore FILE`: puts a backup in place of `<dataDir>/monctl.db`.
 * The data-dir lock is held throughout, so it is refused while a daemon runs
 * there (and no daemon starts halfway). Everything is checked on a copy inside
 * the data dir before the current database is touched; that one is kept under
 * a timestamped name, its WAL folded in first (or moved along when it cannot
 * be opened), so nothing it committed is lost.
 */
export async function restoreBackup(file: string, dataDir: string): Promise<RestoreOutcome> {
  if (!existsSync(file)) throw new BackupError(`no backup at ${file}`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = lockDataDir(dataDir);
  const database = join(dataDir, 'monctl.db');
  const temp = join(dataDir, `.monctl.db.restore-${process.pid}`);
  try {
    copyFileSync(file, temp);
    chmodSync(temp, 0o600);
    const secretFrom = await prepare(temp, file);
    const previous = existsSync(database) ? keepPrevious(database, join(dataDir, previousName(new Date()))) : undefined;
    renameSync(temp, database);
    return { database, ...(previous ? { previous } : {}), secretFrom };
  } finally {
    rmSync(temp, { force: true });
    rmSync(`${temp}-journal`, { force: true });
    lock.release();
  }
}

/** Checks the copy and puts its secret back from FILE.key when it went out at backup time. */
async function prepare(temp: string, file: string): Promise<RestoreOutcome['secretFrom']> {
  let db: InstanceType<typeof SqliteDatabase>;
  try {
    db = new SqliteDatabase(temp, { fileMustExist: true });
    db.pragma('journal_mode = DELETE');
  } catch (err) {
    throw new BackupError(`${file} is not a SQLite database: ${(err as Error).message}`);
  }
  try {
    const problems = checkOpen(db);
    if (problems.length > 0) throw new BackupError(`${file} failed its check, nothing was changed: ${problems.join('; ')}`);
    const known = new Set(Object.keys(await migrationProvider.getMigrations()));
    const names = db.prepare(`select name from ${MIGRATIONS_TABLE}`).pluck().all() as string[];
    const newer = names.filter((n) => !known.has(n));
    if (newer.length > 0)
      throw new BackupError(`${file} was made by a newer monctl (migrations ${newer.join(', ')}): restore it with that version`);
    const setting = (key: string) =>
      (db.prepare('select value from settings where key = ?').get(key) as { value: string } | undefined)?.value;
    if (setting(SECRET_KEY) !== undefined) {
      db.prepare('delete from settings where key = ?').run(FINGERPRINT_KEY);
      return 'backup';
    }
    const keyFile = keyFileOf(file);
    if (!existsSync(keyFile)) {
      throw new BackupError(
        `${file} holds no install secret and ${keyFile} is missing: put the key file written beside the backup there (without it the stored secrets cannot be opened)`,
      );
    }
    const secret = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
    const expected = setting(FINGERPRINT_KEY);
    if (secret.length !== 32 || (expected !== undefined && fingerprintOf(secret) !== expected)) {
      throw new BackupError(`${keyFile} is not the key of ${file} (it was written by another backup or install)`);
    }
    db.transaction(() => {
      db.prepare('insert into settings (key, value) values (?, ?)').run(SECRET_KEY, secret.toString('base64'));
      db.prepare('delete from settings where key = ?').run(FINGERPRINT_KEY);
    })();
    return 'key file';
  } finally {
    db.close();
  }
}

/** Renames the current database to `to`, its committed WAL folded in where it opens, else moved along. */
function keepPrevious(database: string, to: string): string {
  try {
    const db = new SqliteDatabase(database, { fileMustExist: true });
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close(); // the last connection to close removes the WAL and SHM files
    }
  } catch {
    // damaged beyond opening (the reason for many a restore): the files move as they are
  }
  renameSync(database, to);
  for (const suffix of ['-wal', '-shm', '-journal']) {
    if (existsSync(database + suffix)) renameSync(database + suffix, to + suffix);
  }
  return to;
}
