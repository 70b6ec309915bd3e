import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { runMonctl } from '../cli/run.ts';
import { until } from '../helpers/http.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { openCopy, settingOf } from './backup-files.ts';

/**
 * `monctl daemon backup FILE` beside a daemon that keeps writing: six writers
 * create announcements for 30 s, and the backup is taken halfway, while they go on.
 */
let d: TestDaemon;
let dir: string;
const backup = (file: string, ...more: string[]) => runMonctl(['daemon', 'backup', file, '--data-dir', d.dataDir, ...more]);

beforeAll(async () => {
  d = await startDaemon({ databaseUrl: '' });
  dir = mkdtempSync(join(tmpdir(), 'monctl-backup-'));
});
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('monctl daemon backup', { timeout: 90_000 }, () => {
  it('a backup taken while 6 writers insert opens with integrity_check ok and holds every write acknowledged before it began', async () => {
    const acked: number[] = [];
    let writing = true;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const a = await d.admin.call(operations.createAnnouncement, {
          body: { kind: 'INFORMATION', content: `w${n}-${i}`, active: false },
        });
        acked.push(a.id);
      }
    };
    // A long reader (a sqlite3 shell, `daemon check`) holds the checkpoint back, so the writes live in
    // the WAL only: a copy of the database file alone would miss them, an online backup does not.
    const reader = new SqliteDatabase(join(d.dataDir, 'monctl.db'), { readonly: true });
    reader.exec('begin');
    reader.prepare('select count(*) from announcements').get();
    const started = Date.now();
    const writers = Array.from({ length: 6 }, (_, n) => writer(n));
    // Halfway through the 30 s of writing (the writers' own pace), the backup; they keep going until the end.
    await until(() => Date.now() - started >= 15_000 && acked.length >= 600);
    const before = [...acked];
    const file = join(dir, 'busy.db');
    const run = await backup(file);
    const during = acked.length - before.length;
    await until(() => Date.now() - started >= 30_000);
    writing = false;
    await Promise.all(writers);
    reader.exec('commit');
    reader.close();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/busy\.db: ok \(\d+ bytes, integrity_check ok\)/);
    expect(during).toBeGreaterThan(0); // the writers kept going while the backup ran

    const copy = openCopy(file);
    try {
      expect(copy.integrity()).toBe('ok');
      const saved = copy.ids('announcements');
      expect(before.filter((id) => !saved.has(id))).toEqual([]);
      // One snapshot: the writes are serialised on the daemon's connection, so the copy holds every id
      // up to its newest, none missing between.
      const ids = [...saved].sort((a, b) => a - b);
      expect(ids.at(-1)! - ids[0]! + 1).toBe(ids.length);
      expect(ids.at(-1)!).toBeGreaterThanOrEqual(Math.max(...before));
    } finally {
      copy.close();
    }
  });

  it('takes the install secret out of the copy (its bytes too) and writes it beside it; both mode 0600', async () => {
    const file = join(dir, 'plain.db');
    const run = await backup(file);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${file}.key (mode 0600)`);
    const secret = settingOf(join(d.dataDir, 'monctl.db'), 'install_secret')!;
    expect(secret).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(settingOf(file, 'install_secret')).toBeUndefined();
    // secure_delete: the deleted row is zeroed, not left in a free page for anyone to read
    const bytes = readFileSync(file);
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(Buffer.from(secret, 'base64'))).toBe(false);
    expect(readFileSync(`${file}.key`, 'utf8').trim()).toBe(secret);
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600); // as private as the database it copies
    expect(existsSync(`${file}-wal`)).toBe(false); // one self-contained file
  });

  it('--with-secrets keeps the secret inside, with a warning, and writes no key file', async () => {
    const file = join(dir, 'whole.db');
    const run = await backup(file, '--with-secrets');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: --with-secrets keeps the install secret inside the backup/);
    expect(settingOf(file, 'install_secret')).toBe(settingOf(join(d.dataDir, 'monctl.db'), 'install_secret'));
    expect(existsSync(`${file}.key`)).toBe(false);
  });

  it('says what is wrong, with its exit code: no data dir, an unwritable place, the live database, PostgreSQL', async () => {
    const missing = await runMonctl(['daemon', 'backup', join(dir, 'x.db'), '--data-dir', join(dir, 'nowhere')]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no data directory .*nowhere/);

    const noDir = await backup(join(dir, 'no', 'such', 'x.db'));
    expect(noDir.code).toBe(1);
    expect(noDir.stderr).toMatch(/cannot write .*x\.db: .* is missing or not writable/);

    const live = await backup(join(d.dataDir, 'monctl.db'));
    expect(live.code).toBe(2);
    expect(live.stderr).toMatch(/is the live database/);

    mkdirSync(join(dir, 'adir'));
    const isDir = await backup(join(dir, 'adir'));
    expect(isDir.code).toBe(2);

    // No server at that URL: the advice comes before any connection.
    const pg = await runMonctl(['daemon', 'backup', join(dir, 'pg.db'), '--database', 'postgres://monctl@127.0.0.1:1/monctl']);
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(/PostgreSQL: back it up with pg_dump/);
    expect(existsSync(join(dir, 'pg.db'))).toBe(false);
    const pgRestore = await runMonctl(['daemon', 'restore', join(dir, 'busy.db'), '--database', 'postgres://monctl@127.0.0.1:1/monctl']);
    expect(pgRestore.code).toBe(2);
    expect(pgRestore.stderr).toMatch(/PostgreSQL: restore a pg_dump with pg_restore/);
  });
});
