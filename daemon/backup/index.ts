import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge } from 'prom-client';
import type { ModuleFactory } from '../module.ts';
import { writeBackup } from '../store/dialect/sqlite-backup/backup-file.ts';
import { backupNameAt, firstDelay, pruneBackups, removeLeftovers } from './schedule.ts';

/**
 * Scheduled backups (`--backup-dir`): every `--backup-every`, an online backup
 * on the daemon's own connection, stepped (store/dialect/sqlite.ts), its secret
 * in a key file beside it as with `monctl daemon backup`; checked before the
 * oldest beyond `--backup-keep` are removed. One at a time; a failure is
 * logged and counted, and the next period tries again.
 */
export const backupModule: ModuleFactory = (ctx) => {
  const { dir, everyMs, keep } = ctx.config.backup;
  const backup = ctx.store.backup?.bind(ctx.store);
  if (!dir || !backup) return { name: 'backup' };
  const log = ctx.log.child({ module: 'backup' });
  const total = new Counter({
    name: 'monctl_backups_total',
    help: 'Scheduled backups taken, by result (ok, error)',
    labelNames: ['result'] as const,
    registers: [ctx.metrics.registry],
  });
  for (const result of ['ok', 'error']) total.inc({ result }, 0);
  const lastSuccess = new Gauge({
    name: 'monctl_backup_last_success_timestamp_seconds',
    help: 'When the last scheduled backup passed its check (Unix time; 0: none yet)',
    registers: [ctx.metrics.registry],
  });
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const takeOne = async () => {
    const started = Date.now();
    const file = join(dir, backupNameAt(new Date(started)));
    try {
      const done = await writeBackup((temp) => backup(temp, abort.signal), file, false);
      total.inc({ result: 'ok' });
      lastSuccess.set(Date.now() / 1000);
      let removed: string[] = [];
      try {
        removed = pruneBackups(dir, keep);
      } catch (err) {
        log.warn({ err, dir }, 'the new backup is written, but older ones could not be removed');
      }
      log.info({ file, bytes: done.bytes, ms: Date.now() - started, removed }, 'backup written and checked');
    } catch (err) {
      if (abort.signal.aborted) return;
      total.inc({ result: 'error' });
      log.error({ err, file }, 'scheduled backup failed; the older backups are kept');
    }
    if (!abort.signal.aborted) schedule(Math.max(0, started + everyMs - Date.now()));
  };
  const schedule = (delay: number) => {
    timer = setTimeout(() => {
      running = takeOne().finally(() => (running = undefined));
    }, delay);
    timer.unref();
  };

  return {
    name: 'backup',
    start() {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const leftovers = removeLeftovers(dir);
        if (leftovers.length > 0) log.warn({ dir, leftovers }, 'removed the temp files of backups a previous daemon did not finish');
        schedule(firstDelay(dir, everyMs, Date.now()));
      } catch (err) {
        total.inc({ result: 'error' });
        log.error({ err, dir }, 'scheduled backups are off: the backup directory cannot be read');
      }
    },
    async stop() {
      abort.abort();
      clearTimeout(timer);
      await running;
    },
  };
};
