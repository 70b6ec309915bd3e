import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, login, send } from '../helpers/http.ts';

const BOB_PASSWORD = 'bob-password-123';

describe('restart on the same data dir', () => {
  let base: string;
  let dataDir: string;
  let first: TestDaemon;
  let second: TestDaemon | undefined;
  let firstExit: number | null;
  let keyFileBefore: { text: string; mtimeMs: number };
  let kept: { id: number; token: string };
  let revoked: { id: number; token: string };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'monctl-test-'));
    dataDir = join(base, 'data');
    first = await startDaemon({ dataDir });
    await first.admin.call(operations.createUser, { body: { username: 'bob', password: BOB_PASSWORD, role: 'USER' } });
    kept = await first.admin.call(operations.createApiKey, { body: { name: 'kept', role: 'USER' } });
    revoked = await first.admin.call(operations.createApiKey, { body: { name: 'revoked' } });
    await first.admin.call(operations.revokeApiKey, { params: { id: revoked.id } });
    const file = join(dataDir, 'admin-api-key');
    keyFileBefore = { text: readFileSync(file, 'utf8'), mtimeMs: statSync(file).mtimeMs };
    firstExit = await first.stop('SIGTERM');
    // No MONCTL_ADMIN_PASSWORD: a second bootstrap would print a password.
    second = await startDaemon({ dataDir, env: { MONCTL_ADMIN_PASSWORD: undefined as unknown as string } });
  }, 90_000);

  afterAll(async () => {
    if (second && second.proc.exitCode === null && second.proc.signalCode === null) await second.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it('stopped on SIGTERM with exit code 0 after draining', () => {
    expect(firstExit).toBe(0);
    const messages = first.logs.map((l) => l.msg);
    expect(messages).toContain('draining');
    expect(messages.at(-1)).toBe('stopped');
  });

  it('does not bootstrap again', () => {
    const file = join(dataDir, 'admin-api-key');
    expect(readFileSync(file, 'utf8')).toBe(keyFileBefore.text);
    expect(statSync(file).mtimeMs).toBe(keyFileBefore.mtimeMs);
    expect(second!.logs.some((l) => String(l.msg).startsWith('bootstrap'))).toBe(false);
    expect(second!.stderr()).not.toMatch(/password/i);
  });

  it('keeps users and keys', async () => {
    const users = await second!.admin.call(operations.listUsers);
    expect(users.map((u) => [u.username, u.role])).toEqual([
      ['admin', 'ADMIN'],
      ['bob', 'USER'],
    ]);
    const me = await second!.client({ kind: 'api-key', token: kept.token }).call(operations.me);
    expect(me).toMatchObject({ username: 'admin', role: 'USER', keyId: kept.id });
    const { res } = await login(second!.url, 'bob', BOB_PASSWORD);
    expect(res.headers.location).toBe('/api');
  });

  it('keeps a revoked key revoked', async () => {
    const res = await send(second!.url, 'GET', '/api/me', { headers: bearer(revoked.token) });
    expectProblem(res, 401);
    const keys = await second!.admin.call(operations.listApiKeys);
    expect(keys.map((k) => k.name).sort()).toEqual(['bootstrap', 'kept']);
  });

  it('stops on SIGINT with exit code 0 too', async () => {
    const code = await second!.stop('SIGINT');
    expect(code).toBe(0);
    expect(second!.logs.map((l) => l.msg).at(-1)).toBe('stopped');
  });
});
