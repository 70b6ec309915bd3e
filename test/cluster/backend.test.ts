import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { runMonctl } from '../cli/run.ts';
import { createTestDatabase, queryDb } from '../helpers/test-database.ts';

describe('the postgres test project', () => {
  const daemons: TestDaemon[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'monctl-backend-'));
  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives every daemon its own PostgreSQL database: no SQLite file, and the API writes land there', async () => {
    const d = await startDaemon();
    daemons.push(d);
    expect(d.databaseUrl).toMatch(/^postgres:\/\//);
    const listening = d.logs.find((l) => l.msg === 'listening');
    expect(String(listening?.database)).toMatch(/^PostgreSQL /);
    expect(existsSync(join(d.dataDir, 'monctl.db'))).toBe(false);
    const group = await d.admin.call(operations.createGroup, { body: { name: 'on-pg', visibility: 'PUBLIC' } });
    const rows = await queryDb<{ id: number; name: string }>(d, 'SELECT id, name FROM groups WHERE name = ?', 'on-pg');
    expect(rows).toEqual([{ id: group.id, name: 'on-pg' }]);
    expect(typeof rows[0].id).toBe('number');

    const other = await startDaemon();
    daemons.push(other);
    expect(other.databaseUrl).not.toBe(d.databaseUrl);
    expect(await queryDb(other, 'SELECT id FROM groups')).toEqual([]);
  });

  const databaseOf = (d: TestDaemon) => String(d.logs.find((l) => l.msg === 'listening')?.database);

  it('takes the database from --database and from the config file, and never prints its password', async () => {
    const viaFlag = await createTestDatabase();
    const d = await startDaemon({ args: ['--database', viaFlag] });
    daemons.push(d);
    expect(databaseOf(d)).toMatch(new RegExp(`^PostgreSQL .*/${new URL(viaFlag).pathname.slice(1)}$`));

    // The test cluster trusts loopback, so the password is not checked: it only has to stay unprinted.
    const viaFile = new URL(await createTestDatabase());
    viaFile.password = 's3cret-pw';
    const file = join(dir, 'monctl.yaml');
    writeFileSync(file, `database: ${viaFile.href}\n`);
    const printed = await runMonctl(['daemon', '--print-config', '--config', file], { env: { MONCTL_DATABASE_URL: '' } });
    // Secrets are printed commented out and masked, with where they came from.
    expect(printed.stdout).toMatch(/^# database: postgres:\/\/postgres:\*+@.* # file .*monctl\.yaml/m);
    expect(printed.stdout + printed.stderr).not.toContain('s3cret-pw');

    // An empty MONCTL_DATABASE_URL counts as unset: the file's key is the one that applies.
    const fromFile = await startDaemon({ args: ['--config', file], env: { MONCTL_DATABASE_URL: '' } });
    daemons.push(fromFile);
    expect(databaseOf(fromFile)).toMatch(new RegExp(`/${viaFile.pathname.slice(1)}$`));
    expect(fromFile.logs.map((l) => JSON.stringify(l)).join('\n') + fromFile.stderr()).not.toContain('s3cret-pw');
  });
});
