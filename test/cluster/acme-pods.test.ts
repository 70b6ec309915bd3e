import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { Certificate } from '../../src/api/schemas/certificates.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Pebble, startPebble } from '../helpers/pebble.ts';
import { freePort, listeningOn } from '../helpers/free-port.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { until } from '../tunnel/helpers.ts';
import { servedFor } from '../tunnel/tls-edge.ts';

/** The orders pebble received (each new order is one POST to its new-order endpoint). */
const ordersAt = (pebble: Pebble) => pebble.logs().match(/POST \/order-plz/g)?.length ?? 0;

const issuedBy = async (d: TestDaemon) => {
  const text = await (await fetch(`${d.url}/actuator/prometheus`)).text();
  return Number(/^monctl_acme_orders_total\{result="issued"\} (\d+)$/m.exec(text)?.[1] ?? 0);
};

const NAMES = ['p1.test', 'p2.test', 'p3.test', 'p4.test'];

/**
 * Two daemons with ACME on one PostgreSQL database, started one right after the other on a
 * database that already holds four routes: both find the four names due and
 * go through them in the same order while the other orders, each from the
 * rows it read at the start of its pass; pebble gets exactly one order per
 * name (the claims in the database). The validator reaches only the first
 * daemon's edges, so for the names the second wins, the first answers the
 * challenge from the database. Both edges then serve every certificate.
 * Only in the postgres project (test/cluster).
 */
describe('ACME on pods: one order per name', () => {
  let pebble: Pebble;
  let pods: TestDaemon[] = [];
  const routeIds: number[] = [];

  beforeAll(async () => {
    const [httpPort, tlsPort] = [await freePort(), await freePort()];
    pebble = await startPebble({ httpPort, tlsPort });
    const url = await createTestDatabase();
    // The routes exist before any ACME daemon starts, so both start with every name due.
    const boot = await startDaemon({ databaseUrl: url, args: ['--pod-name', 'boot'] });
    try {
      const agent = await boot.admin.call(operations.createAgent, { body: { name: 'office' } });
      for (const [i, hostname] of NAMES.entries()) {
        const route = await boot.admin.call(operations.createRoute, {
          body: { name: `web-${i}`, type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9', hostname },
        });
        routeIds.push(route.id);
      }
    } finally {
      await boot.stop();
    }
    const acme = ['--acme-directory', pebble.directory, '--acme-email', 'ops@example.test', '--acme-challenges', 'http-01'];
    const env = { NODE_EXTRA_CA_CERTS: pebble.listenerCaFile };
    // pod-b may win a name's claim and order it at once, and the validator
    // reaches only pod-a's edge: pod-b starts when that edge accepts
    // connections (pod-a opens its listeners before its ACME pass starts).
    const podA = startDaemon({
      databaseUrl: url,
      adminKeyFrom: boot,
      env,
      args: ['--pod-name', 'pod-a', '--edge-listen', `127.0.0.1:${httpPort}`, '--edge-tls-listen', `127.0.0.1:${tlsPort}`, ...acme],
    });
    await Promise.race([listeningOn(httpPort), podA]);
    pods = await Promise.all([
      podA,
      startDaemon({
        databaseUrl: url,
        adminKeyFrom: boot,
        env,
        args: ['--pod-name', 'pod-b', '--edge-tls-listen', '127.0.0.1:0', ...acme],
      }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(pods.map((p) => p.stop()));
    await pebble?.stop();
  });

  it('orders each name once, whichever pod wins it, and both pods serve every certificate', async () => {
    const [a, b] = pods;
    const certs = await until(async () => {
      const acme = (await a.admin.call(operations.listCertificates)).filter(
        (c: Certificate) => c.source === 'ACME' && c.state !== 'PENDING',
      );
      return acme.length === NAMES.length && acme;
    }, 100);
    expect(certs.map((c) => c.hostnames[0]).sort()).toEqual(NAMES);
    for (const cert of certs)
      expect(cert, pebble.logs()).toMatchObject({ state: 'VALID', challenge: 'http-01', failures: 0, lastError: null });
    // Settle: a second order for a name would come from a pass still under way.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ordersAt(pebble), pebble.logs()).toBe(NAMES.length);
    expect((await issuedBy(a)) + (await issuedBy(b))).toBe(NAMES.length);

    const root = await pebble.root();
    for (const pod of pods) {
      for (const cert of certs) {
        const served = await until(async () => {
          const s = await servedFor(pod.edgeTlsUrl!, cert.hostnames[0], root);
          return 'serial' in s && s;
        });
        expect(served.serial.toLowerCase()).toBe(cert.serial!.toLowerCase());
      }
    }

    // More passes on both pods (a route change starts one on the pod it went through): no second order.
    await a.admin.call(operations.updateRoute, { params: { id: routeIds[0] }, body: { httpsRedirect: true } });
    await b.admin.call(operations.updateRoute, { params: { id: routeIds[1] }, body: { httpsRedirect: true } });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ordersAt(pebble)).toBe(NAMES.length);
    expect((await b.admin.call(operations.listCertificates)).map((c) => c.serial).sort()).toEqual(certs.map((c) => c.serial).sort());
  });
});
