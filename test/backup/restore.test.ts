import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { runMonctl } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { openCopy } from './backup-files.ts';

/**
 * `monctl daemon restore FILE`: into a fresh data dir, where a daemon then
 * starts with the resource, its history and its sealed secret header working;
 * refused while a daemon runs on the data dir, or without the right key; the
 * database it replaces is kept under a timestamped name.
 */
const SECRET = 'hdr-secret-4b1e77';
let d: TestDaemon;
let dir: string;
let file: string;
let target: Server;
let url: string;
let resourceId: number;
const seen: IncomingHttpHeaders[] = [];
const restore = (from: string, dataDir: string) => runMonctl(['daemon', 'restore', from, '--data-dir', dataDir]);
const previousCopies = (dataDir: string) => readdirSync(dataDir).filter((n) => n.startsWith('monctl.db.before-restore-'));

beforeAll(async () => {
  target = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`;
  dir = mkdtempSync(join(tmpdir(), 'monctl-restore-'));
  d = await startDaemon({ databaseUrl: '' });
  const created = await d.admin.call(operations.createResource, {
    body: { name: 'with-secret', resourceType: 'HTTP', target: url, secretHeaders: { 'X-Api-Key': SECRET }, active: false },
  });
  resourceId = created.id;
  await d.admin.call(operations.checkResource, { params: { id: resourceId } });
  file = join(dir, 'monctl-backup.db');
  const made = await runMonctl(['daemon', 'backup', file, '--data-dir', d.dataDir]);
  expect(made.code, made.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await d?.stop();
  await new Promise((r) => target?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('monctl daemon restore', { timeout: 60_000 }, () => {
  it('is refused while a daemon runs on the data dir, which keeps working', async () => {
    const run = await restore(file, d.dataDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/refused: the data directory is in use by another monctl daemon \(PID \d+/);
    expect(previousCopies(d.dataDir)).toEqual([]);
    expect((await d.admin.call(operations.getResource, { params: { id: resourceId } })).name).toBe('with-secret');
  });

  it('into a fresh data dir, then start: the resource, its history and its secret header work', async () => {
    const fresh = join(dir, 'fresh');
    const run = await restore(file, fresh);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/install secret from the key file/);
    expect(statSync(join(fresh, 'monctl.db')).mode & 0o777).toBe(0o600);
    // The admin key file is not in the database (its hash is): the operator brings it, as here.
    copyFileSync(join(d.dataDir, 'admin-api-key'), join(fresh, 'admin-api-key'));
    const back = await startDaemon({ dataDir: fresh, databaseUrl: '' });
    try {
      expect((await back.admin.call(operations.getResource, { params: { id: resourceId } })).name).toBe('with-secret');
      const history = await back.admin.call(operations.getResourceHistory, { params: { id: resourceId }, query: {} });
      expect(history.length).toBeGreaterThanOrEqual(1);
      seen.length = 0;
      await back.admin.call(operations.checkResource, { params: { id: resourceId } });
      expect(seen.at(-1)?.['x-api-key']).toBe(SECRET); // the sealed header opened with the restored secret
    } finally {
      await back.stop();
    }

    // Again over it: the database the daemon just wrote (its WAL folded in) is kept, timestamped.
    const again = await restore(file, fresh);
    expect(again.code, again.stderr).toBe(0);
    const [previous] = previousCopies(fresh);
    expect(previous).toMatch(/^monctl\.db\.before-restore-\d{8}T\d{6}Z$/);
    expect(again.stderr).toContain(previous);
    expect(existsSync(join(fresh, `${previous}-wal`))).toBe(false);
    const kept = openCopy(join(fresh, previous!));
    const restored = openCopy(join(fresh, 'monctl.db'));
    try {
      expect(kept.integrity()).toBe('ok');
      // the check run after the restore is in the kept copy, not in the backup
      expect(kept.ids('check_history').size).toBeGreaterThan(restored.ids('check_history').size);
    } finally {
      kept.close();
      restored.close();
    }
  });

  it('refuses a backup without its key file, with a wrong key, or not a database, and changes nothing', async () => {
    const target = join(dir, 'untouched');
    const lone = join(dir, 'lone.db');
    copyFileSync(file, lone);
    const noKey = await restore(lone, target);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/holds no install secret and .*lone\.db\.key is missing/);

    writeFileSync(`${lone}.key`, `${randomBytes(32).toString('base64')}\n`);
    const wrong = await restore(lone, target);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/lone\.db\.key is not the key of/);

    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'not a database at all, just text'.repeat(200));
    const bad = await restore(junk, target);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/junk\.db (is not a SQLite database|failed its check)/);

    const none = await restore(join(dir, 'missing.db'), target);
    expect(none.code).toBe(3);
    expect(existsSync(join(target, 'monctl.db'))).toBe(false);
  });

  it('a backup made --with-secrets restores without a key file', async () => {
    const whole = join(dir, 'whole.db');
    const made = await runMonctl(['daemon', 'backup', whole, '--data-dir', d.dataDir, '--with-secrets']);
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(`${whole}.key`)).toBe(false);
    const run = await restore(whole, join(dir, 'whole-data'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/install secret from the backup/);
  });
});
