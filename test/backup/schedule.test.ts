import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMonctl } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { openCopy } from './backup-files.ts';

/**
 * Scheduled backups: `--backup-dir` with `--backup-every 1s --backup-keep 2`.
 * The test waits on the daemon's log lines (one per backup, written once the
 * copy passed its check and the old ones were removed), never on a sleep.
 */
let d: TestDaemon;
let dir: string;
let backups: string;
const written = () => d.logs.filter((l) => l.msg === 'backup written and checked');
const failed = () => d.logs.filter((l) => l.msg === 'scheduled backup failed; the older backups are kept');
const metric = async (name: string) => {
  const text = (await d.admin.raw('GET', '/actuator/prometheus')).text;
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-schedule-'));
  backups = join(dir, 'backups');
  mkdirSync(backups);
  // What a daemon killed mid-backup leaves (PID 1 is never this daemon): removed at start.
  writeFileSync(join(backups, '.monctl-2026-01-01T00-00-00.000Z.db.tmp-1'), 'half a copy');
  writeFileSync(join(backups, 'notes.txt'), 'not a backup: never touched');
  d = await startDaemon({ databaseUrl: '', args: ['--backup-dir', backups, '--backup-every', '1s', '--backup-keep', '2'] });
});
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('scheduled backups', { timeout: 60_000 }, () => {
  it('a failed backup is logged and counted, the daemon goes on, and the next one works', async () => {
    await until(() => written().length >= 1); // the first at start: the directory had none
    expect(existsSync(join(backups, '.monctl-2026-01-01T00-00-00.000Z.db.tmp-1'))).toBe(false);
    const aside = join(dir, 'aside');
    renameSync(backups, aside);
    writeFileSync(backups, 'in the way'); // a file where the directory was: the next copy cannot be written
    await until(() => failed().length >= 1);
    expect(await metric('monctl_backups_total{result="error"}')).toBeGreaterThanOrEqual(1);
    rmSync(backups);
    renameSync(aside, backups);
    const before = written().length;
    await until(() => written().length > before);
    expect(await metric('monctl_backups_total{result="ok"}')).toBeGreaterThanOrEqual(2);
    expect(await metric('monctl_backup_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('files appear, each passes integrity_check with its key beside it, and only the newest 2 remain', async () => {
    const start = written().length;
    await until(() => written().length >= start + 4);
    await d.stop(); // nothing is written meanwhile: the directory is looked at as the daemon left it
    const names = readdirSync(backups)
      .filter((n) => n !== 'notes.txt')
      .sort();
    expect(existsSync(join(backups, 'notes.txt'))).toBe(true);
    const dbs = names.filter((n) => n.endsWith('.db'));
    expect(dbs).toHaveLength(2);
    expect(names).toEqual(dbs.flatMap((n) => [n, `${n}.key`]));
    for (const n of dbs) expect(n).toMatch(/^monctl-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z\.db$/);
    const logged = written().map((l) => basename(String(l.file)));
    expect(dbs).toEqual(logged.slice(-2));
    for (const n of dbs) {
      const copy = openCopy(join(backups, n));
      try {
        expect(copy.integrity()).toBe('ok');
        expect(copy.setting('install_secret')).toBeUndefined();
      } finally {
        copy.close();
      }
    }
    const removed = written().flatMap((l) => l.removed as string[]);
    expect(removed.length).toBeGreaterThanOrEqual(2);
    for (const n of removed) expect(existsSync(join(backups, n))).toBe(false);
  });

  it('on PostgreSQL, --backup-dir stops the start with a configuration error', async () => {
    const run = await runMonctl(['daemon', '--print-config', '--backup-dir', dir, '--database', 'postgres://monctl@127.0.0.1:1/monctl']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--backup-dir is for a SQLite store: on PostgreSQL schedule pg_dump/);
  });
});
