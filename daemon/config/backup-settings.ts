import type { BackupConfig } from '../config.ts';
import type { Setting } from './setting.ts';
import * as t from './types.ts';

const row = <T>(s: Setting<T>): Setting => s as Setting;

/** Scheduled backups of the SQLite database (README, Backup and restore). */
export const BACKUP_SETTINGS: readonly Setting[] = [
  row({
    key: 'backupDir',
    flag: '--backup-dir <dir>',
    env: 'MONCTL_BACKUP_DIR',
    type: t.path,
    unsetMeans: 'no scheduled backups',
    help: 'where scheduled backups of the SQLite database go (each checked with integrity_check before older ones are removed)',
  }),
  row({
    key: 'backupEvery',
    flag: '--backup-every <duration>',
    env: 'MONCTL_BACKUP_EVERY',
    type: t.duration,
    default: () => 6 * 3_600_000,
    help: 'time between scheduled backups (with --backup-dir)',
  }),
  row({
    key: 'backupKeep',
    flag: '--backup-keep <count>',
    env: 'MONCTL_BACKUP_KEEP',
    type: t.positiveInteger,
    default: () => 14,
    help: 'scheduled backups kept; older ones are removed once a new one passed its check',
  }),
];

/** The BackupConfig of resolved settings. */
export function backupConfigOf(get: <T>(key: string) => T): BackupConfig {
  const dir = get<string | undefined>('backupDir');
  return { ...(dir ? { dir } : {}), everyMs: get<number>('backupEvery'), keep: get<number>('backupKeep') };
}
