import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ExitCode } from '../../src/errors.ts';
import { DataDirLockedError } from '../store/dialect/sqlite-lock.ts';
import { BackupError, writeBackup } from '../store/dialect/sqlite-backup/backup-file.ts';
import { copyFromFile } from '../store/dialect/sqlite-backup/copy-file.ts';
import { restoreBackup } from '../store/dialect/sqlite-backup/restore.ts';

type Say = (line: string) => void;

/** What `backup` says on PostgreSQL, where the database server owns backups. */
export const PG_DUMP_ADVICE =
  'the database is PostgreSQL: back it up with pg_dump, e.g. `pg_dump --format=custom --file monctl.dump "$MONCTL_DATABASE_URL"`, ' +
  'and restore with `pg_restore --clean --if-exists --dbname "$MONCTL_DATABASE_URL" monctl.dump` (daemons stopped); the install secret is in the dump';

/** `monctl daemon backup FILE [--with-secrets]`: the exit code. */
export async function runBackup(
  dataDir: string,
  database: string | undefined,
  target: string,
  withSecrets: boolean,
  say: Say,
): Promise<number> {
  if (database) {
    say(PG_DUMP_ADVICE);
    return ExitCode.usage;
  }
  const source = join(dataDir, 'monctl.db');
  if (!existsSync(dataDir)) return refuse(say, `no data directory ${dataDir} (give the daemon's --data-dir)`, ExitCode.notFound);
  if (!existsSync(source)) return refuse(say, `no database at ${source}`, ExitCode.notFound);
  const file = resolve(target);
  if (file === resolve(source)) return refuse(say, `${file} is the live database: give another FILE`, ExitCode.usage);
  if (existsSync(file) && statSync(file).isDirectory()) return refuse(say, `${file} is a directory: give a file name`, ExitCode.usage);
  try {
    accessSync(dirname(file), constants.W_OK);
  } catch {
    return refuse(say, `cannot write ${file}: ${dirname(file)} is missing or not writable`, ExitCode.error);
  }
  if (withSecrets) {
    say('warning: --with-secrets keeps the install secret inside the backup: whoever reads the file can open every stored secret');
  }
  try {
    const done = await writeBackup(copyFromFile(source), file, withSecrets);
    process.stdout.write(`${done.file}: ok (${done.bytes} bytes, integrity_check ok)\n`);
    if (done.keyFile) say(`the install secret is in ${done.keyFile} (mode 0600): restore needs it; keep it apart from the backup`);
    return ExitCode.ok;
  } catch (err) {
    return refuse(say, `backup failed: ${(err as Error).message}`, ExitCode.error);
  }
}

/** `monctl daemon restore FILE`: the exit code. */
export async function runRestore(dataDir: string, database: string | undefined, file: string, say: Say): Promise<number> {
  if (database) return refuse(say, 'the database is PostgreSQL: restore a pg_dump with pg_restore instead', ExitCode.usage);
  try {
    const done = await restoreBackup(resolve(file), dataDir);
    if (done.previous) say(`the previous database is kept as ${done.previous}`);
    say(`restored ${done.database} from ${resolve(file)} (install secret from the ${done.secretFrom}); start the daemon on ${dataDir}`);
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof DataDirLockedError) return refuse(say, `refused: ${err.message}`, ExitCode.error);
    if (err instanceof BackupError) return refuse(say, err.message, /^no backup at/.test(err.message) ? ExitCode.notFound : ExitCode.error);
    return refuse(say, `restore failed, nothing was changed: ${(err as Error).message}`, ExitCode.error);
  }
}

function refuse(say: Say, message: string, code: number): number {
  say(message);
  return code;
}
