import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { RouteLogEntry, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { agentSlot } from '../helpers/tls.ts';
import { edge, startAgent, startTarget, type TestAgent, until } from './helpers.ts';

const NAMES = ['a', 'b', 'c'] as const;
const HOST = 'pool.test';

interface Member {
  name: string;
  id: number;
  tokenFile: string;
  agent: TestAgent;
  target: Awaited<ReturnType<typeof startTarget>>;
  tcp: Server;
  tcpPort: number;
}

/** Runs `total` requests, `concurrency` at a time; each result names the target that answered. */
async function load(
  total: number,
  concurrency: number,
  send: (i: number) => Promise<{ status: number; text: string }>,
  /** Past `total`, requests go on while this says so (a load that must outlast an event by some time). */
  more: () => boolean = () => false,
): Promise<Array<{ status: number; name: string; started: number }>> {
  const results: Array<{ status: number; name: string; started: number }> = [];
  let next = 0;
  const worker = async () => {
    while (next < total || more()) {
      const i = next++;
      const started = Date.now();
      const res = await send(i).catch((err: Error) => ({ status: 0, text: err.message }));
      results.push({ status: res.status, name: res.status === 200 ? res.text.split(' ')[0] : res.text, started });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

const tally = (results: Array<{ name: string }>) => {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.name] = (counts[r.name] ?? 0) + 1;
  return counts;
};

/** A TCP connection to the route's port: what the target says before it closes. */
function tcpName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (c) => (got += c));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
    socket.end();
  });
}

/** A WebSocket-like upgrade at the edge: what the target says after its 101. */
function upgradeName(edgeUrl: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(edgeUrl).port), '127.0.0.1');
    let got = '';
    socket.on('data', (c) => (got += c));
    socket.on('end', () => {
      socket.destroy();
      resolve(got.startsWith('HTTP/1.1 101') ? got.slice(got.indexOf('\r\n\r\n') + 4) : got);
    });
    socket.on('error', reject);
    socket.write(`GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: name\r\n\r\n`);
  });
}

/**
 * Agent pools (docs/API.md#agent-pools): one daemon, three `monctl agent` processes (each its own
 * token) on one route, each pointed at its own target that answers with its name.
 */
describe('tunnel: agent pools', () => {
  let daemon: TestDaemon;
  let dir: string;
  let routeId: number;
  const members: Member[] = [];
  /** POSTs seen by the targets, by their x-post-id (a POST must never reach a target twice). */
  const posts = new Map<string, number>();
  let postStarted: ((name: string) => void) | undefined;
  const held = new Map<string, { name: string; res: ServerResponse }>();

  const get = (path: string, headers: Record<string, string> = {}) => edge(daemon.edgeUrl, HOST, 'GET', path, undefined, headers);
  const update = async (body: RouteUpdate) => {
    await daemon.admin.call(operations.updateRoute, { params: { id: routeId }, body });
    // The match API waits for the edge's route table to reload: the next request sees the change.
    await daemon.admin.call(operations.matchRoute, { query: { host: HOST, path: '/' } });
  };
  /** The route's whole access log (the load after the kill can push the entries asked about past one page). */
  const wholeLog = async () => {
    const all: RouteLogEntry[] = [];
    for (let before: number | undefined; ; ) {
      const page = await daemon.admin.call(operations.getRouteLog, { params: { id: routeId }, query: { limit: 1000, before } });
      all.push(...page);
      if (page.length < 1000) return all;
      before = page[page.length - 1].id;
    }
  };
  const connected = (m: Member) =>
    until(async () => (await daemon.admin.call(operations.getAgent, { params: { id: m.id } })).status === 'CONNECTED');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-pools-'));
    daemon = await startDaemon({ args: ['--trusted-proxies', '127.0.0.1/32'] });
    for (const name of NAMES) {
      const slot = await agentSlot(daemon, `agent-${name}`, dir);
      const target = await startTarget((req: IncomingMessage, res: ServerResponse) => {
        const id = req.headers['x-post-id'];
        if (typeof id === 'string') {
          posts.set(id, (posts.get(id) ?? 0) + 1);
          req.once('data', () => postStarted?.(name));
          req.on('end', () => res.end(`${name} posted`));
          return;
        }
        // A GET held unanswered the first time it arrives (its agent is then killed): the retry is answered.
        if (req.url?.startsWith('/hold')) {
          if (!held.has(req.url)) return void held.set(req.url, { name, res });
          return void res.end(`${name} ${req.method} ${req.url}`);
        }
        // Agent a's target is slow on /slow: least-outstanding sends it fewer.
        const delay = req.url?.startsWith('/slow') ? (name === 'a' ? 150 : 5) : 0;
        setTimeout(() => res.end(`${name} ${req.method} ${req.url}`), delay);
      });
      // An upgrade answers 101 and says the target's name.
      target.server.on('upgrade', (_req, socket: Socket) => {
        socket.end(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: name\r\n\r\n${name}`);
      });
      const tcpPort = await freePort();
      const tcp = createServer((socket) => socket.end(name));
      await new Promise<void>((r) => tcp.listen(tcpPort, '127.0.0.1', r));
      members.push({ name, ...slot, target, tcp, tcpPort, agent: startAgent(daemon.url, slot.tokenFile) });
    }
    await Promise.all(members.map(connected));
    const route = await daemon.admin.call(operations.createRoute, {
      body: {
        name: 'pool',
        type: 'HTTP',
        hostname: HOST,
        target: members[0].target.url,
        agents: members.map((m) => ({ agentId: m.id, target: m.target.url })),
      },
    });
    routeId = route.id;
  }, 60_000);

  afterAll(async () => {
    for (const { res } of held.values()) res.destroy();
    await Promise.all(members.map((m) => m.agent.stop('SIGKILL')));
    await daemon?.stop();
    for (const m of members) {
      await m.target.close();
      await new Promise((r) => m.tcp.close(r));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // A test that failed part-way must not leave the next one a smaller pool: every agent runs and is connected.
  beforeEach(async () => {
    for (const m of members) {
      if (m.agent.proc.exitCode !== null || m.agent.proc.signalCode !== null) m.agent = startAgent(daemon.url, m.tokenFile);
    }
    await Promise.all(members.map(connected));
  });

  it('round-robin spreads requests evenly, and the pool counts them per agent', async () => {
    const results = await load(300, 10, (i) => get(`/rr/${i}`));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const counts = tally(results);
    for (const name of NAMES) expect(counts[name]).toBeGreaterThanOrEqual(90);
    const detail = await daemon.admin.call(operations.getRoute, { params: { id: routeId } });
    for (const member of detail.pool ?? []) expect(member.requests).toBeGreaterThanOrEqual(90);
    // The access log names the agent each request went through (its writer batches: wait for the entries).
    const agents = await until(async () => {
      const log = await daemon.admin.call(operations.getRouteLog, { params: { id: routeId }, query: { limit: 100 } });
      const seen = new Set(log.map((e) => e.agentId));
      return seen.size >= members.length && seen;
    });
    expect(agents).toEqual(new Set(members.map((m) => m.id)));
  });

  it('failover sends everything to the first agent in pool order', async () => {
    await update({ policy: 'failover' });
    const counts = tally(await load(300, 10, (i) => get(`/fo/${i}`)));
    expect(counts).toEqual({ a: 300 });
  });

  it('least-outstanding sends fewer requests to a slow target', async () => {
    await update({ policy: 'least-outstanding' });
    const counts = tally(await load(150, 9, (i) => get(`/slow/${i}`)));
    expect(counts.a).toBeLessThan(counts.b);
    expect(counts.a).toBeLessThan(counts.c);
  });

  it('client-ip affinity keeps each client IP on one agent', async () => {
    await update({ policy: 'round-robin', affinity: 'client-ip' });
    const byIp = new Map<string, Set<string>>();
    const results = await load(200, 10, async (i) => {
      const ip = `10.0.0.${i % 40}`;
      const res = await get(`/ip/${i}`, { 'x-forwarded-for': ip });
      if (res.status === 200) byIp.set(ip, (byIp.get(ip) ?? new Set()).add(res.text.split(' ')[0]));
      return res;
    });
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect([...byIp.values()].every((names) => names.size === 1)).toBe(true);
    expect(new Set([...byIp.values()].map((names) => [...names][0])).size).toBe(3);
    const match = await daemon.admin.call(operations.matchRoute, { query: { host: HOST, path: '/', clientIp: '10.0.0.7' } });
    expect(byIp.get('10.0.0.7')).toEqual(new Set([members.find((m) => m.id === match.agentId)!.name]));
    await update({ affinity: 'none' });
  });

  it('SIGKILL of an agent mid-load: GETs keep succeeding, a started POST is a 502 sent once, the agent comes back', async () => {
    // Failover: everything goes to agent a, the one killed.
    await update({ policy: 'failover' });
    const victim = members[0];
    // A POST whose body has started streaming to a's target (held open by the client).
    const started = new Promise<string>((resolve) => (postStarted = resolve));
    const { port } = new URL(daemon.edgeUrl);
    const post = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/upload',
      agent: false,
      headers: { host: HOST, 'x-post-id': 'p1', 'transfer-encoding': 'chunked' },
    });
    const posted = new Promise<number>((resolve, reject) => {
      post.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      post.on('error', reject);
    });
    post.write('first part of the body');
    expect(await started).toBe(victim.name);
    // A GET that a's target holds unanswered: retried once on the next agent when a dies.
    const retried = get('/hold/1');
    await until(() => held.has('/hold/1'));
    expect(held.get('/hold/1')!.name).toBe(victim.name);

    let killedAt = 0;
    // The load outlasts the kill by 2 s whatever the machine's speed: the requests of its last second are the "after 1 s" ones.
    const running = load(
      200,
      6,
      async (i) => {
        if (i === 100) {
          killedAt = Date.now();
          victim.agent.proc.kill('SIGKILL');
        }
        return get(`/kill/${i}`);
      },
      () => killedAt === 0 || Date.now() < killedAt + 2_000,
    );
    expect(await posted).toBe(502);
    post.destroy();
    const again = await retried;
    expect(again.status).toBe(200);
    expect(again.text).toBe('b GET /hold/1');
    const results = await running;
    const late = results.filter((r) => r.started > killedAt + 1_000);
    expect(late.length).toBeGreaterThan(0);
    expect(late.filter((r) => r.status !== 200)).toEqual([]);
    expect(tally(late)).toEqual({ b: late.length });
    expect(posts.get('p1')).toBe(1);
    // The access log names the agent the retried GET went through (its writer batches: wait for both entries).
    const log = await until(async () => {
      const entries = await wholeLog();
      return entries.some((e) => e.path === '/hold/1') && entries.some((e) => e.path === '/upload') && entries;
    });
    expect(log.find((e) => e.path === '/hold/1')).toMatchObject({ status: 200, agentId: members[1].id });
    expect(log.find((e) => e.path === '/upload')).toMatchObject({ status: 502, agentId: victim.id });

    victim.agent = startAgent(daemon.url, victim.tokenFile);
    // Back in the rotation as the edge sees it (failover: the first agent again), not only in the agents table.
    await until(
      async () => (await daemon.admin.call(operations.matchRoute, { query: { host: HOST, path: '/' } })).agentId === victim.id,
      100,
    );
    expect(tally(await load(30, 3, (i) => get(`/back/${i}`)))).toEqual({ a: 30 });
    await update({ policy: 'round-robin' });
  });

  it('an agent whose keepalive goes unanswered leaves the rotation long before its session is cut', async () => {
    await update({ policy: 'failover' });
    const frozen = members[0];
    const match = () => daemon.admin.call(operations.matchRoute, { query: { host: HOST, path: '/' } });
    expect((await match()).agentId).toBe(frozen.id);
    frozen.agent.proc.kill('SIGSTOP');
    try {
      // Suspect once a PING (every 500 ms) stays unanswered for 700 ms; the session is cut only after 10 s.
      const moved = await until(async () => {
        const m = await match();
        return m.agentId === members[1].id && m;
      }, 100);
      expect(moved.reasons.join('\n')).toContain('keepalive unanswered');
      expect((await daemon.admin.call(operations.getAgent, { params: { id: frozen.id } })).status).toBe('CONNECTED');
      expect((await get('/while-frozen')).text).toBe('b GET /while-frozen');
    } finally {
      frozen.agent.proc.kill('SIGCONT');
    }
    await until(async () => (await match()).agentId === frozen.id, 100);
    await update({ policy: 'round-robin' });
  });

  it('WebSocket upgrades are balanced one by one', async () => {
    const names: string[] = [];
    for (let i = 0; i < 6; i++) names.push(await upgradeName(daemon.edgeUrl));
    expect(tally(names.map((name) => ({ name })))).toEqual({ a: 2, b: 2, c: 2 });
  });

  it('a TCP route with three agents spreads connections across the three targets', async () => {
    const listenPort = await freePort();
    const tcp = await daemon.admin.call(operations.createRoute, {
      body: {
        name: 'pool-tcp',
        type: 'TCP',
        listenPort,
        target: `127.0.0.1:${members[0].tcpPort}`,
        agents: members.map((m) => ({ agentId: m.id, target: `127.0.0.1:${m.tcpPort}` })),
      },
    });
    await until(() =>
      tcpName(listenPort)
        .then((name) => name !== '')
        .catch(() => false),
    );
    const names: string[] = [];
    for (let i = 0; i < 30; i++) names.push(await tcpName(listenPort));
    const counts = tally(names.map((name) => ({ name })));
    for (const name of NAMES) expect(counts[name]).toBeGreaterThanOrEqual(8);
    await daemon.admin.call(operations.deleteRoute, { params: { id: tcp.id } });
  });

  it('no agent in the rotation: 503 no-healthy-agent with Retry-After, an HTML page for browsers', async () => {
    const idle = await daemon.admin.call(operations.createAgent, { body: { name: 'never-connected' } });
    const other = await daemon.admin.call(operations.createAgent, { body: { name: 'never-connected-2' } });
    await daemon.admin.call(operations.createRoute, {
      body: {
        name: 'down',
        type: 'HTTP',
        hostname: 'down.pool.test',
        target: members[0].target.url,
        agents: [{ agentId: idle.id }, { agentId: other.id }],
      },
    });
    const page = await edge(daemon.edgeUrl, 'down.pool.test', 'GET', '/', undefined, { accept: 'text/html,*/*' });
    expect(page.status).toBe(503);
    expect(page.headers['retry-after']).toMatch(/^\d+$/);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Service unavailable');
    const api = await edge(daemon.edgeUrl, 'down.pool.test', 'GET', '/');
    expect(api.status).toBe(503);
    expect(api.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(api.text)).toMatchObject({ type: 'urn:monctl:problem:no-healthy-agent', status: 503 });
  });
});
