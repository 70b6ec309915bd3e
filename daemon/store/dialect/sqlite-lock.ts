import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

/** The data directory is held by another process; `pid` is the holder's, as it wrote it. */
export class DataDirLockedError extends Error {
  readonly pid: number | undefined;
  readonly file: string;
  constructor(file: string, pid: number | undefined) {
    super(
      `the data directory is in use by another monctl daemon (${pid === undefined ? 'PID unknown' : `PID ${pid}`}; lock ${file}). ` +
        'One SQLite data directory serves one daemon: stop the other one, or give this one its own --data-dir ' +
        '(several daemons on one database are for a PostgreSQL store only)',
    );
    this.name = 'DataDirLockedError';
    this.pid = pid;
    this.file = file;
  }
}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/**
 * Holds `<data-dir>/monctl.lock` for the life of the process. The lock file is
 * a tiny SQLite database with a write transaction (`BEGIN IMMEDIATE`, a
 * RESERVED lock) left open: SQLite takes it with an fcntl() lock, which the
 * kernel drops when the process dies, so a crashed daemon never leaves a stale
 * lock behind (a PID file or mkdir lock would need guessing at staleness).
 * Node has no flock(); better-sqlite3 is already here, so no new native add-on.
 *
 * RESERVED still lets others read, so a second daemon reads the holder's PID
 * from the file. The PID is committed before the lock is taken for good; if
 * another process slips in between, the final `BEGIN IMMEDIATE` decides.
 *
 * The file must never be opened and closed by other code of this process: a
 * close() on any descriptor drops the process's fcntl locks on that file.
 * `monctl daemon reset-admin` does not take this lock: it shares monctl.db
 * with a running daemon by design.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, 'monctl.lock');
  const fresh = !existsSync(file);
  const db = new SqliteDatabase(file);
  if (fresh) chmodSync(file, 0o600);
  const refuse = (): never => {
    let pid: number | undefined;
    try {
      db.pragma('busy_timeout = 1000'); // the holder may be committing its PID right now
      pid = (db.prepare('select pid from holder where id = 1').get() as { pid: number } | undefined)?.pid;
    } catch {
      // no table yet: the holder has not written its PID
    }
    db.close();
    throw new DataDirLockedError(file, pid);
  };
  const begin = () => {
    try {
      db.exec('begin immediate');
    } catch (err) {
      if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) refuse();
      db.close();
      throw err;
    }
  };
  db.pragma('busy_timeout = 0'); // held means refused at once, not after a wait
  begin();
  db.exec('create table if not exists holder (id integer primary key check (id = 1), pid integer not null, since integer not null)');
  db.prepare('insert or replace into holder (id, pid, since) values (1, ?, ?)').run(process.pid, Date.now());
  db.exec('commit');
  begin();
  return {
    file,
    release() {
      if (!db.open) return;
      db.exec('rollback');
      db.close();
    },
  };
}
