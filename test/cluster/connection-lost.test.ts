import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../daemon/store/dialect/postgres.ts';
import type { OpenedStore } from '../../daemon/store/opened-store.ts';
import { until } from '../alerts/helpers.ts';
import { type PgCluster, startPgCluster } from '../helpers/postgres.ts';

/**
 * node-postgres emits 'error' on a client that is checked out of the pool but
 * has no query running (a transaction between two statements, a LISTEN
 * connection) when the server goes away; with no listener, that is an uncaught
 * exception and the whole pod exits. It must reach the storage health instead.
 * (A pod in test/cluster/database-down.test.ts died this way now and then.)
 */
describe('a connection held when PostgreSQL dies', () => {
  let pg: PgCluster;
  let store: OpenedStore;
  beforeAll(async () => {
    pg = await startPgCluster();
    store = await openPostgres(await pg.createDatabase());
  }, 60_000);
  afterAll(async () => {
    await store?.close().catch(() => {});
    await pg?.stop();
  });

  it('turns health DOWN and throws nothing out of band', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      await store.db.connection().execute(async (conn) => {
        await sql`select 1`.execute(conn);
        pg.kill(); // the server dies while this connection is held, between two queries
        await until(() => store.health.condition.status === 'DOWN', 20);
        await new Promise((r) => setTimeout(r, 200)); // the socket's close follows the server's error message
        await expect(sql`select 1`.execute(conn)).rejects.toMatchObject({ kind: 'unavailable' });
      });
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(uncaught.map((e) => (e as Error).message)).toEqual([]);
  }, 30_000);
});
