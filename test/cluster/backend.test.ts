import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { queryDb } from '../helpers/test-database.ts';

describe('the postgres test project', () => {
  const daemons: TestDaemon[] = [];
  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
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
});
