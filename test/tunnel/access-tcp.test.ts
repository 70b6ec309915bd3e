import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { adminRunner, tempHome } from '../cli/run.ts';
import { freePort } from '../helpers/free-port.ts';
import { startTunnel, type Tunnel, until } from './helpers.ts';

/** A TCP echo target on 127.0.0.1 that counts the connections reaching it. */
async function countingEcho(): Promise<{ port: number; count: () => number; close(): Promise<void> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    count: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * One connection to the edge's TCP port from `from` (any 127.0.0.0/8 address
 * on Linux): 'served' when the echo comes back, 'closed' when the edge closes
 * it without a byte.
 */
function attempt(port: number, from: string): Promise<'served' | 'closed'> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () => socket.write('ping'));
    socket.on('error', () => {});
    socket.once('data', () => {
      socket.destroy();
      resolve('served');
    });
    socket.once('close', () => resolve('closed'));
  });
}

/** A connection held open, echoing on demand: it tells whether the listener was restarted (which would cut it). */
async function held(port: number): Promise<{ echo(): Promise<boolean>; close(): void }> {
  const socket = connect({ port, host: '127.0.0.1' });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  const echo = () =>
    new Promise<boolean>((resolve) => {
      if (socket.destroyed) return resolve(false);
      const onClose = () => resolve(false);
      socket.once('close', onClose);
      socket.once('data', () => {
        socket.off('close', onClose);
        resolve(true);
      });
      socket.write('x');
    });
  return { echo, close: () => socket.destroy() };
}

/**
 * Access control on TCP routes (issue 17 for raw TCP): ipAllow, ipDeny and a
 * rate limit on new connections per client IP, checked at accept against the
 * socket's peer. A refused connection is closed at once: the target (which
 * counts its connections) never sees it, the access log and the metrics say why.
 */
describe('tunnel: access control on TCP routes', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof countingEcho>>;
  let home: ReturnType<typeof tempHome>;
  let monctl: ReturnType<typeof adminRunner>;

  /** A TCP route to the echo with these rules, once its listener serves 127.0.0.1. */
  const route = async (name: string, access: RouteUpdate, probeFrom = '127.0.0.1') => {
    const listenPort = await freePort();
    const created = await tunnel.daemon.admin.call(operations.createRoute, {
      body: { name, type: 'TCP', agentId: tunnel.agentId, target: `127.0.0.1:${target.port}`, listenPort, ...access },
    });
    await until(() => attempt(listenPort, probeFrom).then((r) => r === 'served'));
    return { id: created.id, port: listenPort, route: created };
  };
  const logOf = (id: number, n: number) =>
    until(async () => {
      const entries = await tunnel.daemon.admin.call(operations.getRouteLog, { params: { id }, query: { limit: n } });
      return entries.length >= n && entries;
    });
  const refusedMetric = async (id: number, reason: string) => {
    const text = (await tunnel.daemon.admin.raw('GET', '/actuator/prometheus')).text;
    const line = text.split('\n').find((l) => l.startsWith(`monctl_tunnel_access_refused_total{route="${id}",reason="${reason}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  beforeAll(async () => {
    target = await countingEcho();
    tunnel = await startTunnel();
    home = tempHome();
    monctl = adminRunner(tunnel.daemon, home.dir);
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
    home?.cleanup();
  });

  it('ipDeny and ipAllow by the peer address: refused connections are closed, never reach the target, and are logged and counted', async () => {
    const denied = await route('tcp-denied', { ipDeny: ['127.0.0.2'] });
    const allowed = await route('tcp-allowed', { ipAllow: ['127.0.0.1/32', '::ffff:127.0.0.5'] });
    expect(denied.route).toMatchObject({ ipDeny: ['127.0.0.2/32'], ipAllow: [], rateLimit: null, auth: 'none', httpsRedirect: false });
    const before = target.count();
    expect(await attempt(denied.port, '127.0.0.2')).toBe('closed');
    expect(await attempt(denied.port, '127.0.0.3')).toBe('served');
    expect(await attempt(allowed.port, '127.0.0.3')).toBe('closed');
    expect(await attempt(allowed.port, '127.0.0.5')).toBe('served'); // stored as 127.0.0.5/32
    expect(target.count() - before).toBe(2);
    const deniedLog = await logOf(denied.id, 3);
    expect(deniedLog.find((e) => e.clientIp === '127.0.0.2')).toMatchObject({
      method: 'TCP',
      status: null,
      error: 'access: client 127.0.0.2 is in ipDeny',
      bytesIn: 0,
      bytesOut: 0,
    });
    expect(deniedLog.find((e) => e.clientIp === '127.0.0.3')).toMatchObject({ method: 'TCP', status: null, error: null, bytesIn: 4 });
    expect((await logOf(allowed.id, 3)).find((e) => e.clientIp === '127.0.0.3')).toMatchObject({
      error: 'access: client 127.0.0.3 is not in ipAllow',
    });
    expect(await refusedMetric(denied.id, 'ip_denied')).toBe(1);
    expect(await refusedMetric(allowed.id, 'ip_not_allowed')).toBe(1);
  });

  it('rate limit on new connections per client IP with a burst; each client has its own bucket', async () => {
    const limited = await route('tcp-limited', { rateLimit: { perSecond: 0.01, burst: 3 } }, '127.0.0.6');
    const before = target.count();
    const results: string[] = [];
    for (let i = 0; i < 4; i++) results.push(await attempt(limited.port, '127.0.0.7'));
    expect(results).toEqual(['served', 'served', 'served', 'closed']);
    expect(await attempt(limited.port, '127.0.0.8')).toBe('served');
    expect(target.count() - before).toBe(4);
    const log = await logOf(limited.id, 6);
    expect(log.filter((e) => e.error !== null)).toMatchObject([
      { clientIp: '127.0.0.7', error: 'access: client 127.0.0.7 exceeds the rate limit of 0.01/s (burst 3)' },
    ]);
    expect(await refusedMetric(limited.id, 'rate_limited')).toBe(1);
  });

  it('a change of the lists applies to the next connection, without restarting the listener', async () => {
    const live = await route('tcp-live', {});
    const open = await held(live.port);
    try {
      await tunnel.daemon.admin.call(operations.updateRoute, { params: { id: live.id }, body: { ipDeny: ['127.0.0.0/8'] } });
      await until(() => attempt(live.port, '127.0.0.1').then((r) => r === 'closed'));
      expect(await open.echo()).toBe(true); // the listener kept its connection: it was not restarted
      await tunnel.daemon.admin.call(operations.updateRoute, { params: { id: live.id }, body: { ipDeny: [], ipAllow: ['127.0.0.9'] } });
      await until(() => attempt(live.port, '127.0.0.9').then((r) => r === 'served'));
      expect(await attempt(live.port, '127.0.0.1')).toBe('closed');
      expect(await open.echo()).toBe(true);
    } finally {
      open.close();
    }
  });

  it('monctl routes add|update|get: --ip-allow, --ip-deny and --rate-limit on a TCP route; the HTTP-only flags are usage errors', async () => {
    const port = await freePort();
    const add = await monctl([
      'routes',
      'add',
      'tcp-cli',
      '--agent',
      String(tunnel.agentId),
      '--target',
      `127.0.0.1:${target.port}`,
      '--listen-port',
      String(port),
      '--ip-allow',
      '127.0.0.0/8',
      '--ip-deny',
      '127.0.0.10',
      '--rate-limit',
      '0.01:5',
      '-o',
      'json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({
      type: 'TCP',
      ipAllow: ['127.0.0.0/8'],
      ipDeny: ['127.0.0.10/32'],
      rateLimit: { perSecond: 0.01, burst: 5 },
    });
    await until(() => attempt(port, '127.0.0.1').then((r) => r === 'served'));
    expect(await attempt(port, '127.0.0.10')).toBe('closed');

    const get = await monctl(['routes', 'get', 'tcp-cli']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/IP-ALLOW\s+127\.0\.0\.0\/8/);
    expect(get.stdout).toMatch(/IP-DENY\s+127\.0\.0\.10\/32/);
    expect(get.stdout).toMatch(/RATE-LIMIT\s+0\.01\/s burst 5/);

    const update = await monctl(['routes', 'update', 'tcp-cli', '--ip-deny', '', '--rate-limit', 'off', '-o', 'json']);
    expect(update.code, update.stderr).toBe(0);
    expect(update.json()).toMatchObject({ ipAllow: ['127.0.0.0/8'], ipDeny: [], rateLimit: null });

    const basic = await monctl(['routes', 'update', 'tcp-cli', '--basic-auth', 'alice'], { input: 'pw-alice\n' });
    expect(basic.code).toBe(2);
    expect(basic.stderr).toMatch(/--basic-auth is for HTTP routes only/);
    const redirect = await monctl(['routes', 'update', 'tcp-cli', '--https-redirect']);
    expect(redirect.code).toBe(2);
    expect(redirect.stderr).toMatch(/--https-redirect is for HTTP routes only/);
    const addBasic = await monctl([
      'routes',
      'add',
      'tcp-cli-2',
      '--agent',
      String(tunnel.agentId),
      '--target',
      '127.0.0.1:1',
      '--listen-port',
      String(await freePort()),
      '--auth',
      'apiKey',
    ]);
    expect(addBasic.code).toBe(2);
    expect(addBasic.stderr).toMatch(/--auth is for HTTP routes only/);
  });
});
