import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { until } from '../alerts/helpers.ts';
import { eventually } from '../alerts/world.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { type Pebble, startPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/free-port.ts';
import { servedFor } from '../tunnel/tls-edge.ts';
import { type Pods, startPods } from './pods.ts';

const NAMES = Array.from({ length: 6 }, (_, i) => `site-${i}.test`);

/** The pod whose log says it ordered `name`, if any. */
const orderers = (pods: TestDaemon[], name: string) =>
  pods.filter((p) => p.logs.some((l) => l.msg === 'acme: ordering a certificate' && l.hostname === name));

/**
 * ACME orders exactly once across pods (issue 18): 3 pods on one PostgreSQL
 * database, with ACME against one Debian pebble, all see the same route
 * hostnames. Each name is ordered by one pod only, and pebble's HTTP-01
 * validation, sent by the "load balancer" in front to a pod that did not
 * order the name, is answered from the database. Every pod's TLS edge
 * serves every certificate at once (not at its next minute's reload).
 */
describe('ACME across pods', () => {
  let cluster: Pods;
  let pebble: Pebble;
  let lb: Server;
  const answeredBy = new Map<string, string>();

  beforeAll(async () => {
    // The plain edges' load balancer: pebble validates through it; it picks a pod that is not the orderer.
    lb = createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0];
      const ordered = orderers(cluster.pods, host);
      const pod = cluster.pods.find((p) => !ordered.includes(p)) ?? cluster.pods[0];
      answeredBy.set(host, pod.url);
      const edge = new URL(pod.edgeUrl);
      const upstream = request({ host: edge.hostname, port: edge.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((r) => lb.listen(0, '127.0.0.1', r));
    pebble = await startPebble({ httpPort: (lb.address() as AddressInfo).port, tlsPort: await freePort() });
    cluster = await startPods(3, {
      args: [
        '--edge-tls-listen',
        '127.0.0.1:0',
        '--acme-directory',
        pebble.directory,
        '--acme-email',
        'ops@example.test',
        '--acme-challenges',
        'http-01',
      ],
      env: { NODE_EXTRA_CA_CERTS: pebble.listenerCaFile },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await pebble?.stop();
    await new Promise<void>((r) => (lb ? lb.close(() => r()) : r()));
  });

  it('each route hostname is ordered by one pod, validated through another, and served by all', async () => {
    const a = cluster.pod('pod-a');
    const agent = await a.admin.call(operations.createAgent, { body: { name: 'office' } });
    // Routes created through every pod: each pod hears of each hostname (its own write, or the others' through the database).
    const routes: number[] = [];
    for (const [i, name] of NAMES.entries()) {
      routes[i] = (
        await cluster.pods[i % 3].admin.call(operations.createRoute, {
          body: { name: `r${i}`, type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9/', hostname: name },
        })
      ).id;
    }
    const valid = await until(async () => {
      const certs = (await a.admin.call(operations.listCertificates)).filter((c) => c.source === 'ACME');
      return certs.length === NAMES.length && certs.every((c) => c.state === 'VALID') ? certs : undefined;
    }, 200);
    expect(valid.map((c) => c.hostnames[0]).sort()).toEqual(NAMES);
    // Every pod passes over the names again (a route change wakes them all): nothing is ordered a second time.
    await cluster.pod('pod-b').admin.call(operations.updateRoute, { params: { id: routes[0] }, body: { target: 'http://127.0.0.1:10/' } });
    await new Promise((r) => setTimeout(r, 2_000));

    const counts = NAMES.map(
      (name) => cluster.pods.flatMap((p) => p.logs).filter((l) => l.msg === 'acme: ordering a certificate' && l.hostname === name).length,
    );
    expect(counts, `orders per name: ${counts}\n${pebble.logs().slice(-2000)}`).toEqual(NAMES.map(() => 1));
    for (const name of NAMES) {
      const [orderer] = orderers(cluster.pods, name);
      expect(answeredBy.has(name), `pebble validated ${name} through the load balancer`).toBe(true);
      expect(answeredBy.get(name), `the validation of ${name} went to a pod that did not order it`).not.toBe(orderer.url);
    }
    // Every pod's TLS edge serves each certificate, whichever pod ordered it.
    const root = await pebble.root();
    for (const pod of cluster.pods) {
      for (const cert of valid) {
        const name = cert.hostnames[0];
        await eventually(
          `${name} at ${pod.url}'s TLS edge`,
          async () => {
            const served = await servedFor(pod.edgeTlsUrl!, name, root);
            return 'serial' in served && served.serial === cert.serial;
          },
          10_000,
        );
      }
    }
  }, 120_000);
});
