import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsClient, WebSocketServer } from 'ws';
import { operations } from '../../src/api/operations.ts';
import { edge, startTarget, startTunnel, subscribe, type Tunnel, until } from './helpers.ts';
import { freePort } from '../helpers/free-port.ts';

/** Connection-shaped traffic: WebSocket upgrades and TCP routes, through a real agent. */
describe('tunnel: WebSocket and TCP', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let wss: WebSocketServer;
  let echo: net.Server;
  let echoPort: number;

  beforeAll(async () => {
    target = await startTarget((_req, res) => res.end('plain'));
    wss = new WebSocketServer({ server: target.server, path: '/ws' });
    wss.on('connection', (socket, req) => {
      socket.send(`hello ${req.headers['x-forwarded-host']}`);
      socket.on('message', (data, binary) => socket.send(data, { binary }));
    });
    echo = net.createServer({ allowHalfOpen: true }, (socket) => socket.pipe(socket));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoPort = (echo.address() as net.AddressInfo).port;
    tunnel = await startTunnel();
    await tunnel.httpRoute('ws', target.url, 'ws.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    wss?.close();
    await target?.close();
    echo?.close();
  });

  it('passes a WebSocket upgrade through and echoes text and binary frames', async () => {
    const url = new URL(tunnel.daemon.edgeUrl);
    const client = new WsClient(`ws://${url.host}/ws`, { headers: { host: 'ws.test' } });
    const received: Array<string | Buffer> = [];
    client.on('message', (data, binary) => received.push(binary ? Buffer.from(data as Buffer) : String(data)));
    await new Promise((resolve, reject) => {
      client.once('open', resolve);
      client.once('error', reject);
    });
    const big = Buffer.alloc(1024 * 1024, 7);
    client.send('ping 1');
    client.send(big);
    await until(() => received.length === 3);
    expect(received[0]).toBe('hello ws.test');
    expect(received[1]).toBe('ping 1');
    expect(Buffer.compare(received[2] as Buffer, big)).toBe(0);
    const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
    client.close(1000);
    expect(await closed).toBe(1000);
  });

  it('relays a declined upgrade and refuses upgrades for unknown hosts', async () => {
    const url = new URL(tunnel.daemon.edgeUrl);
    const declined = new WsClient(`ws://${url.host}/not-ws`, { headers: { host: 'ws.test' } });
    declined.on('error', () => {}); // terminate() below reports the aborted handshake
    const status = await new Promise<number>((resolve) => declined.once('unexpected-response', (_req, res) => resolve(res.statusCode!)));
    expect(status).toBe(400);
    declined.terminate();
    const unknown = new WsClient(`ws://${url.host}/ws`, { headers: { host: 'nobody.test' } });
    unknown.on('error', () => {});
    const refused = await new Promise<number>((resolve) => unknown.once('unexpected-response', (_req, res) => resolve(res.statusCode!)));
    expect(refused).toBe(404);
    unknown.terminate();
  });

  it('pipes a TCP route to its target, half-close included, and logs the connection', async () => {
    const port = await freePort();
    const route = await tunnel.daemon.admin.call(operations.createRoute, {
      body: { name: 'echo', type: 'TCP', agentId: tunnel.agentId, target: `127.0.0.1:${echoPort}`, listenPort: port },
    });
    const log = await subscribe(tunnel.daemon, `/admin/sse/routes/${route.id}/log`);
    try {
      const payload = Buffer.alloc(3 * 1024 * 1024, 'x');
      const got = await until(() => tcpRoundTrip(port, payload).catch(() => undefined), 100);
      expect(got.length).toBe(payload.length);
      expect(Buffer.compare(got, payload)).toBe(0);
      const entry = await until(() => log.events.find((e) => e.event === 'LOG' && e.data.bytesOut === payload.length));
      expect(entry.data).toMatchObject({ routeId: route.id, method: 'TCP', bytesIn: payload.length, error: null, clientIp: '127.0.0.1' });

      // Disabled: the listener goes away.
      await tunnel.daemon.admin.call(operations.updateRoute, { params: { id: route.id }, body: { enabled: false } });
      await until(
        () =>
          tcpRoundTrip(port, Buffer.from('x')).then(
            () => false,
            () => true,
          ),
        100,
      );
    } finally {
      log.close();
    }
  });

  it('keeps serving HTTP after all that', async () => {
    expect((await edge(tunnel.daemon.edgeUrl, 'ws.test', 'GET', '/')).text).toBe('plain');
  });
});

/** Sends the payload, half-closes, and collects everything until the other side ends. */
function tcpRoundTrip(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      socket.end();
      resolve(Buffer.concat(chunks));
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed before the end')));
    socket.end(payload);
  });
}
