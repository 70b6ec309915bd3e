import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatchers, type Dispatchers } from '../../src/probes/dispatchers.ts';
import { probeHttp } from '../../src/probes/http-probe.ts';
import { probeTcp } from '../../src/probes/tcp-probe.ts';
import { freePort } from '../helpers/free-port.ts';

const TIMEOUT = 1_000; // lowered for the never-answering server; the default stays 15 s
let dispatchers: Dispatchers;
let plain: Server;
let tls: Server;
let base: string;
let tlsUrl: string;
let dir: string;
let connections = 0;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  dispatchers = createDispatchers(TIMEOUT);
  plain = createServer((req, res) => {
    const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (hop) return void res.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` }).end();
    switch (req.url) {
      case '/ok':
        return void res.end('fine');
      case '/empty':
        return void res.writeHead(204).end();
      case '/moved':
        return void res.writeHead(301, { location: '/ok' }).end();
      case '/loop':
        return void res.writeHead(302, { location: '/loop' }).end();
      case '/missing':
        return void res.writeHead(404).end('no');
      case '/down':
        return void res.writeHead(503).end('down');
      case '/big': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      case '/hang':
        return; // never answers
      default:
        return void res.writeHead(500).end();
    }
  });
  plain.on('connection', () => connections++);
  base = `http://127.0.0.1:${await listen(plain)}`;
  dir = mkdtempSync(join(tmpdir(), 'monctl-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=not-this-host.example',
    ],
    { stdio: 'ignore' },
  );
  tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) =>
    res.end('secure'),
  );
  tlsUrl = `https://127.0.0.1:${await listen(tls)}/`;
});

afterAll(async () => {
  await dispatchers.close();
  for (const server of [plain, tls]) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('HTTP probe', () => {
  it('200 is available', async () => {
    expect(await probeHttp(`${base}/ok`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'AVAILABLE',
      message: '200 OK',
      errorCode: null,
    });
  });

  it('204 is available', async () => {
    expect(await probeHttp(`${base}/empty`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'AVAILABLE',
      message: '204 No Content',
      errorCode: null,
    });
  });

  it('301 to 200 follows the redirect', async () => {
    expect(await probeHttp(`${base}/moved`, false, dispatchers, TIMEOUT)).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
  });

  it('an endless redirect chain stops at the limit and is not available', async () => {
    expect(await probeHttp(`${base}/hop/0`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: 'more than 10 redirects (302 Found)',
      errorCode: '302',
    });
  });

  it('a redirect loop is not available', async () => {
    const r = await probeHttp(`${base}/loop`, false, dispatchers, TIMEOUT);
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', message: 'redirect loop detected', errorCode: 'CONNECTION_ERROR' });
  });

  it('404 and 503 carry the status code and line', async () => {
    expect(await probeHttp(`${base}/missing`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: '404 Not Found',
      errorCode: '404',
    });
    expect(await probeHttp(`${base}/down`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: '503 Service Unavailable',
      errorCode: '503',
    });
  });

  it('a server that never answers times out', async () => {
    expect(await probeHttp(`${base}/hang`, false, dispatchers, TIMEOUT)).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: `timeout after ${TIMEOUT} ms`,
      errorCode: 'CONNECTION_ERROR',
    });
  });

  it('a large body is not buffered and the check still passes', async () => {
    expect(await probeHttp(`${base}/big`, false, dispatchers, TIMEOUT)).toMatchObject({ status: 'AVAILABLE' });
  });

  it('a refused port is a connection error', async () => {
    const port = await freePort();
    const r = await probeHttp(`http://127.0.0.1:${port}/`, false, dispatchers, TIMEOUT);
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(r.message).toContain('ECONNREFUSED');
  });

  it('an unresolvable host is a connection error', async () => {
    const r = await probeHttp('http://does-not-exist.invalid/', false, dispatchers, TIMEOUT);
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(r.message).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it('a self-signed, mismatched certificate fails without skipTLS', async () => {
    const r = await probeHttp(tlsUrl, false, dispatchers, TIMEOUT);
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(r.message).toMatch(/self-signed|SELF_SIGNED/i);
  });

  it('a self-signed, mismatched certificate passes with skipTLS, for that check only', async () => {
    expect(await probeHttp(tlsUrl, true, dispatchers, TIMEOUT)).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
    expect(await probeHttp(tlsUrl, false, dispatchers, TIMEOUT)).toMatchObject({ status: 'NOT_AVAILABLE' });
  });

  it('reuses connections across checks of the same host', async () => {
    await probeHttp(`${base}/ok`, false, dispatchers, TIMEOUT);
    const before = connections;
    for (let i = 0; i < 5; i++) await probeHttp(`${base}/ok`, false, dispatchers, TIMEOUT);
    expect(connections).toBe(before);
  });
});

describe('TCP probe', () => {
  it('connected is available', async () => {
    const server = createTcpServer((socket) => socket.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      expect(await probeTcp(`127.0.0.1:${port}`, TIMEOUT)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a refused port is a connection error', async () => {
    const port = await freePort();
    const r = await probeTcp(`127.0.0.1:${port}`, TIMEOUT);
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(r.message).toContain('ECONNREFUSED');
  });

  it('IPv6 loopback in brackets', async () => {
    const server = createTcpServer((socket) => socket.end());
    const ok = await new Promise<boolean>((r) => {
      server.once('error', () => r(false));
      server.listen(0, '::1', () => r(true));
    });
    if (!ok) return; // no IPv6 on this machine
    try {
      const port = (server.address() as { port: number }).port;
      expect(await probeTcp(`[::1]:${port}`, TIMEOUT)).toMatchObject({ status: 'AVAILABLE' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
