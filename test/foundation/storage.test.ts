import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../daemon/store/migrations/index.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';

function sourcesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourcesUnder(path));
    else if (/\.(ts|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

describe('storage', () => {
  let base: string;
  let d: TestDaemon;
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'monctl-test-'));
    d = await startDaemon({ dataDir: join(base, 'data') });
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it('runs every migration at start, in name order, on a WAL database', async () => {
    const db = new Database(join(d.dataDir, 'monctl.db'), { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const applied = db.prepare('select name from kysely_migration order by timestamp, name').all() as Array<{ name: string }>;
      const expected = Object.keys(await migrationProvider.getMigrations()).sort();
      expect(applied.map((r) => r.name)).toEqual(expected);
    } finally {
      db.close();
    }
  });

  it('leaves a database that passes integrity_check after SIGTERM', async () => {
    expect(await d.stop('SIGTERM')).toBe(0);
    const db = new Database(join(d.dataDir, 'monctl.db'), { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('keeps SQLite behind the dialect module: only daemon/store/dialect imports better-sqlite3', () => {
    const offenders = ['daemon', 'src', 'cli', 'bin']
      .flatMap((top) => sourcesUnder(join(ROOT, top)))
      .filter((file) => /from\s+['"]better-sqlite3['"]|import\(\s*['"]better-sqlite3['"]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file))
      .filter((file) => !file.startsWith('daemon/store/dialect/'));
    expect(offenders).toEqual([]);
  });
});
