import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, login, send } from '../helpers/http.ts';

/**
 * `GET /actuator/health` is public: on PostgreSQL it says how the pod sees the
 * database, but where that database is (user, host, port, name) only to ADMIN.
 * On SQLite the body is the status alone, for everyone.
 */
describe('health: where the database is, for ADMIN only', () => {
  let d: TestDaemon;
  let userKey: string;
  let session: Record<string, string>;
  beforeAll(async () => {
    d = await startDaemon();
    await d.admin.call(operations.createUser, { body: { username: 'viewer', password: 'viewer-password-1', role: 'USER' } });
    userKey = (await d.admin.call(operations.createApiKey, { body: { name: 'reader', role: 'USER' } })).token;
    session = (await login(d.url, 'viewer', 'viewer-password-1')).jar.header();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('names the database to ADMIN, and to no one else', async () => {
    const admin = (await send(d.url, 'GET', '/actuator/health', { headers: bearer(d.adminKey) })).json();
    const callers: Array<[string, Record<string, string>]> = [
      ['anonymous', {}],
      ['a USER session', session],
      ['a USER key', bearer(userKey)],
    ];
    if (d.databaseUrl) {
      const where = new URL(d.databaseUrl);
      expect(admin).toEqual({
        status: 'UP',
        components: { db: { status: 'UP', details: { database: expect.stringMatching(/^PostgreSQL /) } } },
      });
      expect(admin.components.db.details.database).toContain(where.pathname.slice(1));
      for (const [who, headers] of callers) {
        const res = await send(d.url, 'GET', '/actuator/health', { headers });
        expect(res.json(), who).toEqual({ status: 'UP', components: { db: { status: 'UP' } } });
        for (const part of [where.hostname, where.port, where.username, where.pathname.slice(1)].filter(Boolean))
          expect(res.text, who).not.toContain(part);
      }
    } else {
      expect(admin).toEqual({ status: 'UP' });
      for (const [who, headers] of callers)
        expect((await send(d.url, 'GET', '/actuator/health', { headers })).json(), who).toEqual({ status: 'UP' });
    }
  });
});
