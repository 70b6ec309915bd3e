import { join } from 'node:path';
import type { Logger } from '../logger.ts';
import type { StorageHealth } from './storage-health.ts';

/** How often the corruption advice is repeated while the damaged file keeps failing queries. */
const CORRUPT_LOG_EVERY_MS = 60_000;

/** The command an admin runs to see what is damaged (also in README, "Storage problems"). */
export function integrityCheckAdvice(dataDir: string): string {
  return (
    `run the integrity check: monctl daemon check --data-dir ${dataDir} ` +
    `(or: sqlite3 ${join(dataDir, 'monctl.db')} 'PRAGMA integrity_check'), then restore monctl.db from a backup with the daemon stopped`
  );
}

/** One log line per change of the storage condition; the corruption advice at most once a minute. */
export function logStorageHealth(health: StorageHealth, log: Logger, dataDir: string): void {
  let lastCorruptLog = 0;
  health.onChange((condition, error) => {
    if (condition.reason === 'unavailable') {
      log.error(
        { code: condition.code, err: error?.cause },
        `the database cannot be reached (${condition.code}): health is DOWN, requests that need it answer 503 and this pod claims no work until it is back`,
      );
    } else if (condition.status === 'DOWN') {
      if (Date.now() - lastCorruptLog < CORRUPT_LOG_EVERY_MS) return;
      lastCorruptLog = Date.now();
      log.error(
        { code: error?.code ?? condition.code, err: error?.cause },
        `the database file is corrupt (${error?.code ?? condition.code}): health is DOWN and reads that meet the damage answer 503; ${integrityCheckAdvice(dataDir)}`,
      );
    } else if (condition.status === 'DEGRADED') {
      log.error(
        { code: condition.code, dataDir },
        `storage full (${condition.code}): writes answer 507 until space is freed in ${dataDir}; reads still work; health is DEGRADED`,
      );
    } else {
      log.info({ dataDir }, 'storage reachable and writable again: health is UP');
    }
  });
}
