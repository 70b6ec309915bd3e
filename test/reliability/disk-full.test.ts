import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, send } from '../helpers/http.ts';

/**
 * Disk full, for real: the data dir is a small tmpfs, filled by a file until
 * ENOSPC. Needs mount(2) (root, or a container allowed to mount); skipped with
 * the reason logged where it is not.
 */
const base = mkdtempSync(join(tmpdir(), 'monctl-diskfull-'));
const mnt = join(base, 'mnt');
mkdirSync(mnt);
let mountRefused: string | undefined;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mnt], { stdio: 'pipe' });
} catch (err) {
  mountRefused = String((err as { stderr?: Buffer }).stderr ?? err).trim();
  console.warn(`disk-full test skipped: cannot mount a tmpfs (${mountRefused})`);
}

/** Fills the tmpfs to the last byte; returns the filler's path. */
function fill(): string {
  const file = join(mnt, `filler-${Date.now()}`);
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          writeSync(fd, chunk, 0, size);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

describe.skipIf(mountRefused !== undefined)('disk full (tmpfs data dir)', () => {
  let d: TestDaemon;
  let n = 0;
  const create = () =>
    send(d.url, 'POST', '/api/resources', {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: `r-${++n}`, resourceType: 'TCP', target: '127.0.0.1:9', active: false }),
    });
  const health = () => send(d.url, 'GET', '/actuator/health');
  /** Writes until one is refused: WAL pages already on disk may take a first small write. */
  async function firstRefusedWrite() {
    for (let i = 0; i < 50; i++) {
      const res = await create();
      if (res.status !== 200) return res;
    }
    throw new Error('50 writes on a full disk all succeeded');
  }

  beforeAll(async () => {
    d = await startDaemon({ dataDir: join(mnt, 'data') });
  });
  afterAll(async () => {
    await d?.stop();
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('answers 507 problem+json naming SQLITE_FULL, keeps reads, health DEGRADED; writes and UP return with space', {
    timeout: 60_000,
  }, async () => {
    const first = await create();
    expect(first.status).toBe(200);
    const filler = fill();

    const refused = await firstRefusedWrite();
    expect(refused.status, refused.text).toBe(507);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.json()).toMatchObject({
      type: 'urn:monctl:problem:storage-full',
      title: 'Insufficient Storage',
      status: 507,
      cause: 'SQLITE_FULL',
    });
    expect(refused.json().detail).toContain('SQLITE_FULL');
    const detail = await send(d.url, 'GET', `/api/resources/${first.json().id}`, { headers: bearer(d.adminKey) });
    expect(detail.status).toBe(200);
    expect(detail.json().name).toBe('r-1');
    expect((await send(d.url, 'GET', '/admin/api/resources', { headers: bearer(d.adminKey) })).status).toBe(200);
    const degraded = await health();
    expect(degraded.status).toBe(200);
    expect(degraded.json()).toEqual({ status: 'DEGRADED' });
    expect(d.logs.some((l) => l.level === 50 && String(l.msg).startsWith('storage full (SQLITE_FULL)'))).toBe(true);

    rmSync(filler);
    const saved = await create();
    expect(saved.status, saved.text).toBe(200);
    expect((await health()).json()).toEqual({ status: 'UP' });
    expect((await send(d.url, 'GET', `/api/resources/${saved.json().id}`, { headers: bearer(d.adminKey) })).status).toBe(200);
  });

  it("with nothing else writing, the store's own probe write brings health back to UP once space is freed", {
    timeout: 60_000,
  }, async () => {
    const filler = fill();
    expect((await firstRefusedWrite()).status).toBe(507);
    expect((await health()).json()).toEqual({ status: 'DEGRADED' });
    rmSync(filler);
    let status = 'DEGRADED';
    for (const deadline = Date.now() + 30_000; status === 'DEGRADED' && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await health()).json().status;
    }
    expect(status).toBe('UP');
    expect(d.logs.some((l) => l.msg === 'storage reachable and writable again: health is UP')).toBe(true);
    expect((await create()).status).toBe(200);
  });
});
