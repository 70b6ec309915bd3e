import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ADMIN_PASSWORD, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, login, send } from '../helpers/http.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

/** Runs `monctl daemon` expecting it to exit by itself; returns its exit code and stderr. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; dataDir: string; base: string }> {
  const base = mkdtempSync(join(tmpdir(), 'monctl-test-'));
  const dataDir = join(base, 'data');
  const proc = spawn(
    join(ROOT, 'bin/monctl'),
    ['daemon', '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--data-dir', dataDir],
    { cwd: ROOT, env: { ...process.env, TZ: 'UTC', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => proc.once('exit', (code) => resolve({ code, stderr, dataDir, base })));
}

describe('bootstrap with MONCTL_ADMIN_PASSWORD', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('writes the admin API key with mode 0600, and it is an ADMIN key', async () => {
    const file = join(d.dataDir, 'admin-api-key');
    expect(mode(file)).toBe(0o600);
    expect(d.adminKey).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const me = await d.admin.call(operations.me);
    expect(me).toMatchObject({ username: 'admin', role: 'ADMIN', via: 'api-key' });
    const keys = await d.admin.call(operations.listApiKeys);
    expect(keys.find((k) => k.id === me.keyId)).toMatchObject({ name: 'bootstrap', role: 'ADMIN', createdBy: 'admin', expiresAt: null });
  });

  it('keeps the data dir 0700 and the database 0600', () => {
    expect(mode(d.dataDir)).toBe(0o700);
    expect(mode(join(d.dataDir, 'monctl.db'))).toBe(0o600);
  });

  it('uses the given password and prints none', async () => {
    expect(d.stderr()).not.toMatch(/password/i);
    const { res } = await login(d.url, 'admin', ADMIN_PASSWORD);
    expect(res.status).toBe(302);
    expect(res.headers.location).not.toMatch(/error/);
    expect(d.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('bootstrap'))).toBe(true);
  });

  it('answers health without authentication', async () => {
    const res = await send(d.url, 'GET', '/actuator/health');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'UP' });
    const withKey = await send(d.url, 'GET', '/actuator/health', { headers: bearer(d.adminKey) });
    expect(withKey.status).toBe(200);
  });
});

describe('bootstrap without MONCTL_ADMIN_PASSWORD', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    // undefined drops the variable from the child's environment.
    d = await startDaemon({ env: { MONCTL_ADMIN_PASSWORD: undefined as unknown as string } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('prints a random password once on stderr, and it logs in', async () => {
    const matches = [...d.stderr().matchAll(/password (\S+)/g)];
    expect(matches).toHaveLength(1);
    const password = matches[0][1];
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(password).not.toBe(ADMIN_PASSWORD);
    const wrong = await login(d.url, 'admin', ADMIN_PASSWORD);
    expect(wrong.res.headers.location).toBe('/login?error');
    const { res } = await login(d.url, 'admin', password);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/api');
  });

  it('never writes the password to the structured logs', () => {
    const password = /password (\S+)/.exec(d.stderr())![1];
    expect(JSON.stringify(d.logs)).not.toContain(password);
  });
});

describe('bootstrap with a short MONCTL_ADMIN_PASSWORD', () => {
  it('exits non-zero with a clear message and writes no key', async () => {
    const run = await runToExit({ MONCTL_ADMIN_PASSWORD: 'short-pw' });
    try {
      expect(run.code).not.toBe(0);
      expect(run.code).not.toBeNull();
      // Checked with the other settings, before anything starts (exit 2).
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/MONCTL_ADMIN_PASSWORD: must be at least 12 characters/);
      expect(existsSync(join(run.dataDir, 'admin-api-key'))).toBe(false);
    } finally {
      rmSync(run.base, { recursive: true, force: true });
    }
  });
});
