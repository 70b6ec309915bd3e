import { createHash } from 'node:crypto';
import { chmodSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { integrityCheckOff } from './check-copy.ts';

/** The settings row of the install secret, which seals every stored secret. */
export const SECRET_KEY = 'install_secret';
/** What a backup without its secret holds instead: the SHA-256 of the secret, so restore can tell a wrong key file. */
export const FINGERPRINT_KEY = 'install_secret_sha256';
/** The migrations table kysely's migrator keeps: what marks a monctl database. */
export const MIGRATIONS_TABLE = 'kysely_migration';

/** A backup that could not be made or checked: reported as a message, not a stack. */
export class BackupError extends Error {}

export interface BackupOutcome {
  file: string;
  /** The key file beside it; absent when the secret stayed inside (--with-secrets). */
  keyFile?: string;
  bytes: number;
}

export const fingerprintOf = (secret: Buffer) => createHash('sha256').update(secret).digest('hex');
export const keyFileOf = (file: string) => `${file}.key`;

/**
 * Makes the backup FILE: `copy` writes a SQLite copy to a temp name beside
 * FILE; the secret comes out of it (unless `withSecrets`) and goes to FILE.key,
 * the copy passes `integrity_check`, and only then is it renamed to FILE, so
 * FILE is never a half-written or unchecked copy.
 */
export async function writeBackup(copy: (temp: string) => Promise<void>, file: string, withSecrets: boolean): Promise<BackupOutcome> {
  const temp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  rmSync(temp, { force: true });
  try {
    await copy(temp);
    const secret = stripSecret(temp, withSecrets);
    const problems = await integrityCheckOff(temp);
    if (!(problems.length === 1 && problems[0] === 'ok')) {
      throw new BackupError(`the copy failed its check, nothing was kept: ${problems.join('; ')}`);
    }
    let keyFile: string | undefined;
    if (secret) {
      keyFile = keyFileOf(file);
      const keyTemp = `${temp}.key`;
      writeFileSync(keyTemp, `${secret.toString('base64')}\n`, { mode: 0o600 });
      chmodSync(keyTemp, 0o600); // a umask cannot widen it, but an existing file keeps its mode
      renameSync(keyTemp, keyFile);
    }
    chmodSync(temp, 0o600); // the daemon's own file is 0600: a copy of it is no less private
    renameSync(temp, file);
    return { file, ...(keyFile ? { keyFile } : {}), bytes: statSync(file).size };
  } finally {
    rmSync(temp, { force: true });
    rmSync(`${temp}.key`, { force: true });
  }
}

/**
 * Turns the raw copy into a self-contained backup: one file (rollback journal,
 * not WAL), the secret taken out with secure_delete so its bytes are zeroed
 * rather than left in a free page. Quick: the full check comes after, off the event loop.
 */
function stripSecret(temp: string, withSecrets: boolean): Buffer | undefined {
  const db = new SqliteDatabase(temp, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    if (!db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(MIGRATIONS_TABLE)) {
      throw new BackupError('the copy is not a monctl database (no migrations table)');
    }
    if (withSecrets) return undefined;
    db.pragma('secure_delete = ON');
    const row = db.prepare('select value from settings where key = ?').get(SECRET_KEY) as { value: string } | undefined;
    if (!row) return undefined;
    const secret = Buffer.from(row.value, 'base64');
    db.transaction(() => {
      // Fingerprint first: its row must not be what happens to overwrite the freed cell.
      db.prepare('insert or replace into settings (key, value) values (?, ?)').run(FINGERPRINT_KEY, fingerprintOf(secret));
      db.prepare('delete from settings where key = ?').run(SECRET_KEY);
    })();
    return secret;
  } finally {
    db.close();
  }
}

/** `integrity_check` and the migrations table of an open copy: the problems, none when it is a sound monctl database. */
export function checkOpen(db: InstanceType<typeof SqliteDatabase>): string[] {
  const rows = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
  if (!(rows.length === 1 && rows[0] === 'ok')) return rows;
  const migrations = db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(MIGRATIONS_TABLE);
  return migrations ? [] : ['not a monctl database (no migrations table)'];
}
