import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { until } from '../alerts/helpers.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, send } from '../helpers/http.ts';
import { type PgCluster, startPgCluster } from '../helpers/postgres.ts';

const LEASE_MS = 6_000; // daemon/cluster/shard-leases.ts
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A pod that loses its database (issue 18): health says DOWN (503, naming the
 * database to ADMIN), requests that need it answer 503, and the pod runs no checks
 * once its leases could have run out; when the database is back, so is the pod.
 * The test has a PostgreSQL server of its own, which it kills.
 */
describe('a pod without its database', () => {
  let pg: PgCluster;
  let pod: TestDaemon;
  let server: Server;
  let hits = 0;

  beforeAll(async () => {
    pg = await startPgCluster();
    server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    pod = await startDaemon({ databaseUrl: await pg.createDatabase(), args: ['--pod-name', 'lonely'] });
    for (let i = 0; i < 20; i++) {
      await pod.admin.call(operations.createResource, {
        body: { name: `r${i}`, resourceType: 'HTTP', target: `${target}${i}`, intervalSeconds: 10 },
      });
    }
  }, 60_000);
  afterAll(async () => {
    await pod?.stop();
    await pg?.stop();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it('reports DOWN and stops checking while PostgreSQL is gone, and comes back UP with it', async () => {
    await until(() => hits >= 20);
    const up = await send(pod.url, 'GET', '/actuator/health', { headers: bearer(pod.adminKey) });
    expect(up.status).toBe(200);
    expect(up.json()).toMatchObject({
      status: 'UP',
      components: { db: { status: 'UP', details: { database: expect.stringMatching(/^PostgreSQL /) } } },
    });

    pg.kill();
    await until(async () => (await send(pod.url, 'GET', '/actuator/health')).status === 503, 200);
    const down = await send(pod.url, 'GET', '/actuator/health');
    expect(down.json()).toMatchObject({ status: 'DOWN', components: { db: { status: 'DOWN', details: { reason: 'unavailable' } } } });
    const list = await send(pod.url, 'GET', '/api/resources');
    expect(list.status).toBe(503);
    expect(list.json().type).toBe('urn:monctl:problem:storage-unavailable');

    // Once its leases could have run out (others may hold them now), it runs nothing.
    await sleep(LEASE_MS);
    const stopped = hits;
    await sleep(12_000); // more than an interval: every resource would have been due
    expect(hits - stopped, 'checks run without the database').toBe(0);
    expect(pod.logs.some((l) => String(l.msg).startsWith('shard leases not renewed in time'))).toBe(true);

    await pg.restart();
    await until(async () => (await send(pod.url, 'GET', '/actuator/health')).status === 200, 200);
    expect((await send(pod.url, 'GET', '/api/resources')).status).toBe(200);
    await until(() => hits > stopped + 10, 200);
  }, 120_000);
});
