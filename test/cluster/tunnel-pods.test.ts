import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { agentSlot, makePki, type TestPki } from '../helpers/tls.ts';
import { edge, startAgent, startTarget, type TestAgent, until } from '../tunnel/helpers.ts';
import { freePort } from '../helpers/free-port.ts';
import { queryDb } from '../helpers/test-database.ts';
import { type Pods, startPods } from './pods.ts';

/**
 * A TCP load balancer in front of the pods' API listeners, as an operator
 * would put one (or DNS): each connection goes to the first pod, in order,
 * that accepts it. The agent's --server points here.
 */
async function frontOf(pods: () => TestDaemon[]): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const tryPod = (i: number) => {
      const pod = pods()[i];
      if (!pod) return client.destroy();
      const { port } = new URL(pod.url);
      const upstream = connect(Number(port), '127.0.0.1');
      upstream.once('error', () => tryPod(i + 1));
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    tryPod(0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** An upgrade at an edge: after the 101, what is sent comes back (the target echoes). */
function echoThroughUpgrade(edgeUrl: string, message: string): Promise<string> {
  const { port } = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let got = '';
    socket.on('error', reject);
    socket.write('GET /ws HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    socket.on('data', (chunk) => {
      got += chunk;
      const at = got.indexOf('\r\n\r\n');
      if (at < 0) return;
      if (!got.startsWith('HTTP/1.1 101')) return reject(new Error(got));
      if (got.length === at + 4) return void socket.write(message);
      if (got.length >= at + 4 + message.length) {
        socket.destroy();
        resolve(got.slice(at + 4));
      }
    });
  });
}

/**
 * The tunnel across pods (issue 18): 3 pods on one PostgreSQL database, an
 * agent connected (through a load balancer) to pod A. Requests (and
 * upgrades) at pod B's and pod C's edges reach the agent's target through pod A. SIGKILL pod A:
 * the agent reconnects (to B, through the balancer) and requests at B and C
 * succeed again; the topology shows the agent's CONNECTION on its new pod.
 */
describe('the tunnel across pods', () => {
  let cluster: Pods;
  let front: Awaited<ReturnType<typeof frontOf>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let agent: TestAgent;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-pods-tunnel-'));
    target = await startTarget((req, res) => res.end(`hello ${req.method} ${req.url}`));
    // A WebSocket-like upgrade that echoes what follows.
    target.server.on('upgrade', (_req, socket: Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.pipe(socket);
    });
    cluster = await startPods(3);
    front = await frontOf(() => ['pod-a', 'pod-b', 'pod-c'].map((name) => cluster.pod(name)));
  }, 60_000);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await cluster?.stop();
    await front?.close();
    await target?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = (pod: TestDaemon, path: string) => edge(pod.edgeUrl, 'app.test', 'GET', path);
  const connectionOf = async (pod: TestDaemon, agentId: number) => {
    const topology = await pod.admin.call(operations.getTopology);
    const edges = topology.edges.filter((e) => e.kind === 'CONNECTION' && e.to === `agent:${agentId}`);
    return { edges, pods: topology.pods };
  };

  it("serves the agent's route at every pod's edge, and again after the agent's pod is killed", async () => {
    const [a, b, c] = ['pod-a', 'pod-b', 'pod-c'].map((name) => cluster.pod(name));
    const slot = await agentSlot(a, 'office', dir);
    await a.admin.call(operations.createRoute, {
      body: { name: 'app', type: 'HTTP', agentId: slot.id, target: target.url, hostname: 'app.test' },
    });
    agent = startAgent(front.url, slot.tokenFile);
    await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED', 100);
    const before = await connectionOf(c, slot.id);
    const podA = before.pods.find((p) => p.name === 'pod-a')!;
    expect(before.edges).toEqual([{ from: `pod:${podA.id}`, to: `agent:${slot.id}`, kind: 'CONNECTION' }]);
    expect(before.pods.map((p) => p.name).sort()).toEqual(['pod-a', 'pod-b', 'pod-c']);

    // At every pod's edge, several times (the relay connections are kept alive and reused), with a body.
    for (const pod of [a, b, c]) {
      for (let i = 0; i < 3; i++) {
        const res = await get(pod, `/x${i}`);
        expect(res.status, `${pod.url}: ${res.text}`).toBe(200);
        expect(res.body.toString()).toBe(`hello GET /x${i}`);
      }
      const posted = await edge(pod.edgeUrl, 'app.test', 'POST', '/post', Buffer.alloc(200_000, 'x'));
      expect(posted.status).toBe(200);
      expect(await echoThroughUpgrade(pod.edgeUrl, `ping ${pod.url}`)).toBe(`ping ${pod.url}`);
    }

    // The agent's pod dies: the agent reconnects through the balancer (to pod B); B's and C's edges serve again.
    await a.stop('SIGKILL');
    await until(async () => {
      const results = await Promise.all([b, c].map((pod) => get(pod, '/after').catch(() => undefined)));
      return results.every((r) => r?.status === 200 && r.body.toString() === 'hello GET /after');
    }, 200);
    const after = await connectionOf(c, slot.id);
    const podB = after.pods.find((p) => p.name === 'pod-b')!;
    expect(after.edges).toEqual([{ from: `pod:${podB.id}`, to: `agent:${slot.id}`, kind: 'CONNECTION' }]);
  }, 120_000);

  it("refuses a relay without the pods' token", async () => {
    const pod = cluster.pods.find((p) => p.proc.exitCode === null && p.proc.signalCode === null)!;
    const { port } = new URL(pod.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/admin/tunnel/relay',
        agent: false,
        headers: {
          connection: 'Upgrade',
          upgrade: 'monctl-relay',
          authorization: 'Bearer not-the-token',
          'x-monctl-relay-agent': '1',
          'x-monctl-relay-target': JSON.stringify({ host: '127.0.0.1', port: 22 }),
        },
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve(101);
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
  });
});

/** A TCP exchange: sends `message`, half-closes, and reads until the other side ends. */
function tcpExchange(host: string, port: number, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let got = '';
    socket.on('error', reject);
    socket.on('data', (c) => (got += c));
    socket.on('end', () => resolve(got));
    socket.end(message);
  });
}

/**
 * TCP routes and remote checks across pods: two pods (their edges on
 * different loopback addresses, as on two hosts), the agent connected to pod
 * A; a connection to the route's port at pod B reaches the target through
 * pod A, half-close kept; pod B's resources located at the agent are checked
 * there through pod A.
 */
describe('TCP routes and remote checks across pods', () => {
  let cluster: Pods;
  let echo: Server;
  let agent: TestAgent;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-pods-tcp-'));
    // Echoes, and says bye once the client has half-closed.
    echo = createServer({ allowHalfOpen: true }, (socket) => {
      let got = '';
      socket.on('data', (c) => (got += c));
      socket.on('end', () => socket.end(`${got} bye`));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    cluster = await startPods(1);
    await cluster.add('pod-b', { args: ['--edge-listen', '127.0.0.2:0'] });
    await until(
      async () =>
        (await queryDb<{ shards: number }>(cluster.pod('pod-a'), 'SELECT shards FROM cluster_members')).filter(
          (m) => Number(m.shards) === 32,
        ).length === 2,
      200,
    );
  }, 60_000);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await cluster?.stop();
    await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves the route's port at the pod without the agent", async () => {
    const a = cluster.pod('pod-a');
    const slot = await agentSlot(a, 'tcp-office', dir);
    const listenPort = await freePort();
    await a.admin.call(operations.createRoute, {
      body: { name: 'echo', type: 'TCP', agentId: slot.id, target: `127.0.0.1:${(echo.address() as { port: number }).port}`, listenPort },
    });
    agent = startAgent(a.url, slot.tokenFile);
    await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED', 100);
    expect(new URL(cluster.pod('pod-b').edgeUrl).hostname).toBe('127.0.0.2');
    expect(await until(() => tcpExchange('127.0.0.1', listenPort, 'at a').catch(() => undefined), 100)).toBe('at a bye');
    expect(await until(() => tcpExchange('127.0.0.2', listenPort, 'at b').catch(() => undefined), 100)).toBe('at b bye');
  });

  it("runs remote checks of resources on either pod through the agent's session", async () => {
    const a = cluster.pod('pod-a');
    // 'ok' only to the request the resource asks for: the check's conditions and headers cross the relay too.
    const web = createHttpServer((req, res) => res.end(req.headers['x-probe'] === 'yes' ? 'ok' : 'no'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
      // 64 resources fill the 64 shards: both pods check some, all at the agent (connected to pod A).
      for (let i = 0; i < 64; i++) {
        await a.admin.call(operations.createResource, {
          body: {
            name: `remote-${i}`,
            resourceType: 'HTTP',
            target: `${url}/${i}`,
            intervalSeconds: 10,
            locations: ['tcp-office'],
            headers: { 'X-Probe': 'yes' },
            conditions: ['[BODY] == ok'],
          } as never,
        });
      }
      // Two scheduled rounds of every resource, each on the pod holding its shard.
      type Row = { resource_id: number; status: string; location: string | null };
      const history = await until(async () => {
        const rows = await queryDb<Row>(
          a,
          'SELECT h.resource_id, o.status, d.location FROM check_history h JOIN check_outcomes o ON o.id = h.outcome_id LEFT JOIN check_details d ON d.history_id = h.id',
        );
        const per = new Map<number, number>();
        for (const r of rows) per.set(r.resource_id, (per.get(r.resource_id) ?? 0) + 1);
        return per.size === 64 && [...per.values()].every((n) => n >= 2) ? rows : undefined;
      }, 500);
      expect(
        history
          .filter((r) => r.status !== 'AVAILABLE' || r.location !== 'tcp-office')
          .map((r) => `${r.resource_id}: ${r.status} at ${r.location}`),
      ).toEqual([]);
      const list = (await a.admin.call(operations.listResources)).filter((r) => r.name.startsWith('remote-'));
      expect(list.filter((r) => r.currentStatus !== 'available').map((r) => `${r.name}: ${r.currentStatus}`)).toEqual([]);
      await until(
        async () =>
          (await queryDb<{ checks_total: number }>(a, 'SELECT checks_total FROM cluster_members')).filter((m) => Number(m.checks_total) > 0)
            .length === 2,
        200,
      );
    } finally {
      await new Promise<void>((r) => web.close(() => r()));
    }
  }, 60_000);
  it('steers every pod by the health verdicts of the agents the other pod checks', async () => {
    const [a, b] = [cluster.pod('pod-a'), cluster.pod('pod-b')];
    // Two targets that name themselves; the second one's /health can fail.
    let failing = false;
    const named = (name: string) =>
      startTarget((req, res) => res.end(req.url === '/health' ? (name === 'beta' && failing ? 'DOWN' : 'UP') : name));
    const [alpha, beta] = await Promise.all([named('alpha'), named('beta')]);
    const slot = await agentSlot(a, 'health-b', dir);
    const second = startAgent(b.url, slot.tokenFile); // held by pod B, checked there
    try {
      const office = (await a.admin.call(operations.listAgents)).find((x) => x.name === 'tcp-office')!;
      const route = await a.admin.call(operations.createRoute, {
        body: {
          name: 'checked',
          type: 'HTTP',
          hostname: 'checked.test',
          target: alpha.url,
          agents: [{ agentId: office.id }, { agentId: slot.id, target: beta.url }],
          healthCheck: { path: '/health', intervalSeconds: 1, conditions: ['[BODY] == UP'] },
        },
      });
      const pool = async () => (await a.admin.call(operations.getRoute, { params: { id: route.id } })).pool ?? [];
      const names = async (n: number) => {
        const got = new Set<string>();
        for (let i = 0; i < n; i++) got.add((await edge(a.edgeUrl, 'checked.test', 'GET', '/who')).text);
        return [...got].sort().join(',');
      };
      await until(async () => (await pool()).every((m) => m.health === 'HEALTHY'), 100);
      await until(async () => (await names(4)) === 'alpha,beta', 100);
      failing = true;
      await until(async () => (await pool())[1].health === 'UNHEALTHY', 100);
      // Pod A holds only alpha's agent: it learns beta's verdict from pod B, and stops sending it requests.
      await until(async () => (await names(4)) === 'alpha', 100);
      expect(await names(6)).toBe('alpha');
      failing = false;
      await until(async () => (await names(4)) === 'alpha,beta', 100);
      expect((await pool())[1]).toMatchObject({ health: 'HEALTHY', inRotation: true, healthError: null });
    } finally {
      await second.stop('SIGKILL');
      await Promise.all([alpha.close(), beta.close()]);
    }
  }, 60_000);
});

/**
 * Pods whose API listens on HTTPS (--tls-cert): the relay dials the holder
 * with TLS and verifies it like any client (NODE_EXTRA_CA_CERTS here).
 */
describe('the relay to a pod with an HTTPS API', () => {
  let cluster: Pods;
  let pki: TestPki;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let agent: TestAgent;

  beforeAll(async () => {
    pki = makePki();
    const pair = pki.issue('pods', 1);
    target = await startTarget((req, res) => res.end(`tls hello ${req.url}`));
    cluster = await startPods(2, {
      args: ['--tls-cert', pair.certFile, '--tls-key', pair.keyFile],
      ca: pki.ca,
      env: { NODE_EXTRA_CA_CERTS: pki.caFile },
    });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await cluster?.stop();
    await target?.close();
    pki?.cleanup();
  });

  it("serves the route at the other pod's edge", async () => {
    const a = cluster.pod('pod-a');
    expect(a.url).toMatch(/^https:/);
    const slot = await agentSlot(a, 'tls-office', pki.dir);
    await a.admin.call(operations.createRoute, {
      body: { name: 'tls-app', type: 'HTTP', agentId: slot.id, target: target.url, hostname: 'tls.test' },
    });
    agent = startAgent(a.url, slot.tokenFile, [], { NODE_EXTRA_CA_CERTS: pki.caFile });
    await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED', 100);
    const res = await until(async () => {
      const got = await edge(cluster.pod('pod-b').edgeUrl, 'tls.test', 'GET', '/over-tls');
      return got.status === 200 ? got : undefined;
    }, 200);
    expect(res.text).toBe('tls hello /over-tls');
  });
});
