import net from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { edge, startTarget, startTunnel, subscribe, type Tunnel, until } from './helpers.ts';

/** Bad input and failing targets: each gets its answer and nothing else is disturbed. */
describe('tunnel: edge errors', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let routeId: number;
  const aborted: string[] = [];
  let uploads = 0;

  beforeAll(async () => {
    target = await startTarget((req, res) => {
      if (req.url === '/never') return; // no answer: the agent's target timeout fires
      if (req.url === '/upload') {
        uploads++;
        req.on('aborted', () => aborted.push(req.url!));
        req.on('end', () => res.end('got it all'));
        req.resume();
        return;
      }
      res.end(`ok ${req.url}`);
    });
    tunnel = await startTunnel(['--target-timeout', '1']);
    routeId = await tunnel.httpRoute('main', target.url, 'main.test');
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    await tunnel.httpRoute('refused', `http://127.0.0.1:${closed}`, 'refused.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  const expectServing = async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'main.test', 'GET', '/still');
    expect(res.text).toBe('ok /still');
  };

  it('answers 502 problem+json when the target refuses the connection', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'refused.test', 'GET', '/x');
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text).detail).toMatch(/ECONNREFUSED/);
  });

  it('answers 504 problem+json when the target does not answer in time', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'main.test', 'GET', '/never');
    expect(res.status).toBe(504);
    expect(JSON.parse(res.text)).toMatchObject({ status: 504, detail: 'target timed out' });
    await expectServing();
  });

  it('answers malformed requests with 400 and keeps serving', async () => {
    for (const raw of ['GARBAGE\r\n\r\n', 'GET /x HTTP/1.1\r\nHost: main.test\r\nBad Header\r\n\r\n', 'GET / HTTP/1.1\r\n\r\n']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const url = new URL(tunnel.daemon.edgeUrl);
        const socket = net.connect(Number(url.port), url.hostname, () => socket.write(raw));
        let text = '';
        socket.on('data', (c) => (text += c));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
    }
    await expectServing();
  });

  it('a client that disconnects mid-body cancels the target request and is logged', async () => {
    const log = await subscribe(tunnel.daemon, `/admin/sse/routes/${routeId}/log`);
    try {
      const url = new URL(tunnel.daemon.edgeUrl);
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: '/upload',
        agent: false,
        headers: { host: 'main.test', 'content-length': String(10 * 1024 * 1024) },
      });
      req.on('error', () => {});
      req.write(Buffer.alloc(512 * 1024));
      await until(() => uploads === 1); // the target is receiving the body
      req.destroy();
      const entry = await until(() => log.events.find((e) => e.event === 'LOG' && e.data.path === '/upload'));
      expect(entry.data).toMatchObject({ method: 'PUT', error: 'client disconnected' });
      await until(() => aborted.length === 1);
      await expectServing();
    } finally {
      log.close();
    }
  });

  it('deleting the agent disconnects it; its routes are gone', async () => {
    await tunnel.daemon.admin.call(operations.deleteAgent, { params: { id: tunnel.agentId } });
    await until(() => tunnel.agent.logs.find((l) => l.msg === 'tunnel: dial failed' && l.status === 401));
    expect((await edge(tunnel.daemon.edgeUrl, 'main.test', 'GET', '/x')).status).toBe(404);
  });
});
