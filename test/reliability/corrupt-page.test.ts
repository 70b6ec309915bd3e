import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runMonctl } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { runDaemonToExit } from '../helpers/daemon-exit.ts';
import { bearer, send } from '../helpers/http.ts';

const base = mkdtempSync(join(tmpdir(), 'monctl-corrupt-'));
const daemons: TestDaemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

/** A stopped daemon's data dir with one resource (inactive unless said); returns its id. */
async function dataDirWithResource(dataDir: string, active = false): Promise<number> {
  const d = await startDaemon({ dataDir });
  daemons.push(d);
  const created = await send(d.url, 'POST', '/api/resources', {
    headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'corrupted', resourceType: 'TCP', target: '127.0.0.1:9', active }),
  });
  expect(created.status, created.text).toBe(200);
  expect(await d.stop()).toBe(0);
  return created.json().id;
}

/** Overwrites the b-tree page header of `pageno` with 0xff: SQLite reports SQLITE_CORRUPT when it loads the page. */
function corruptPage(file: string, pageno: number, pageSize: number) {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(8, 0xff), 0, 8, (pageno - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

describe('a corrupt database page', () => {
  it('reads that meet it answer 503, the log tells the admin to run the integrity check, health is DOWN', { timeout: 60_000 }, async () => {
    const dataDir = join(base, 'history');
    const file = join(dataDir, 'monctl.db');
    const id = await dataDirWithResource(dataDir);
    // 3,000 history rows (many leaf pages), written while the daemon is stopped, then all in the main file.
    const db = new Database(file);
    const outcome = db
      .prepare("insert into check_outcomes (key, status, error_code, message) values ('test', 'AVAILABLE', null, ?) returning id")
      .get(`check ${'x'.repeat(40)}`) as { id: number };
    const insert = db.prepare('insert into check_history (resource_id, outcome_id, checked_at, duration_ms) values (?, ?, ?, 5)');
    const old = Date.now() - 40 * 86_400_000;
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) insert.run(id, outcome.id, old + i * 60_000);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    const leaves = db.prepare("select pageno from dbstat where name = 'check_history' and pagetype = 'leaf' order by path").all() as Array<{
      pageno: number;
    }>;
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    db.close();
    expect(leaves.length).toBeGreaterThan(10);
    corruptPage(file, leaves[Math.floor(leaves.length / 2)]!.pageno, pageSize);

    const d = await startDaemon({ dataDir });
    daemons.push(d);
    // Walk the history from the newest entry down; the damaged page lies half-way.
    let path = `/api/resources/${id}/history?limit=100`;
    let res = await send(d.url, 'GET', path, { headers: bearer(d.adminKey) });
    for (let pages = 0; res.status === 200 && typeof res.headers.link === 'string' && pages < 40; pages++) {
      path = /<([^>]+)>/.exec(res.headers.link)![1]!;
      res = await send(d.url, 'GET', path, { headers: bearer(d.adminKey) });
    }
    expect(res.status, res.text).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ type: 'urn:monctl:problem:storage-corrupt', status: 503, cause: 'SQLITE_CORRUPT' });
    // The same page again: still 503, not an empty or shortened list.
    expect((await send(d.url, 'GET', path, { headers: bearer(d.adminKey) })).status).toBe(503);

    const health = await send(d.url, 'GET', '/actuator/health');
    expect(health.status).toBe(503);
    expect(health.json()).toEqual({ status: 'DOWN' });
    const advice = d.logs.find((l) => String(l.msg).startsWith('the database file is corrupt'));
    expect(advice, JSON.stringify(d.logs.slice(-5))).toBeDefined();
    expect(advice!.level).toBe(50);
    expect(String(advice!.msg)).toContain(`monctl daemon check --data-dir ${dataDir}`);
    expect(String(advice!.msg)).toContain(`sqlite3 ${file} 'PRAGMA integrity_check'`);

    // The command the log names finds the damage, beside the running daemon.
    const check = await runMonctl(['daemon', 'check', '--data-dir', dataDir]);
    expect(check.code).toBe(1);
    expect(check.stdout).not.toContain(': ok');
    expect(check.stderr).toContain('is damaged');
  });

  /** Corrupts the root page (the only page: one row) of the resources table. */
  function corruptResources(file: string) {
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const { rootpage } = db.prepare("select rootpage from sqlite_schema where type = 'table' and name = 'resources'").get() as {
      rootpage: number;
    };
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    db.close();
    corruptPage(file, rootpage, pageSize);
  }

  // The daemon reads every resource at start (the schedule and the visibility map, in pages of
  // ids over the table itself), so a damaged resources page stops the start even when only
  // inactive resources sit on it; damage met later answers 503 (the history test above).
  it('a damaged resources page holding only an inactive resource: exit 1 with the integrity-check advice', {
    timeout: 60_000,
  }, async () => {
    const dataDir = join(base, 'resources');
    const file = join(dataDir, 'monctl.db');
    await dataDirWithResource(dataDir);
    const healthy = await runMonctl(['daemon', 'check', '--data-dir', dataDir]);
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(healthy.stdout).toBe(`${file}: ok\n`);
    corruptResources(file);
    const run = await runDaemonToExit(dataDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the database file is corrupt');
    expect(run.stderr).toContain(`monctl daemon check --data-dir ${dataDir}`);
  });

  it('a damaged table the daemon must read at start: exit 1 with the integrity-check advice', { timeout: 60_000 }, async () => {
    const dataDir = join(base, 'scheduled');
    await dataDirWithResource(dataDir, true); // active: the scheduler reads it at start
    corruptResources(join(dataDir, 'monctl.db'));
    const run = await runDaemonToExit(dataDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the database file is corrupt');
    expect(run.stderr).toContain(`monctl daemon check --data-dir ${dataDir}`);
  });
});
