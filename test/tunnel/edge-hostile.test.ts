import { connect as h2connect, type ClientHttp2Session, constants as h2 } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { edge, startTarget, startTunnel, type Tunnel, until } from './helpers.ts';
import { servedFor, tlsEdge } from './tls-edge.ts';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Raw bytes to a port; resolves with what came back once the server closes (or after a second of silence). */
function raw(port: number, bytes: Buffer | string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(bytes));
    let got = '';
    socket.setTimeout(1_000, () => socket.destroy());
    socket.on('data', (c) => (got += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(got));
  });
}

function h2session(url: string, ca: string, servername: string): Promise<ClientHttp2Session> {
  const session = h2connect(url, { ca, servername });
  session.on('error', () => {});
  // Resolved once the server's SETTINGS arrived (`connect` comes before them).
  return new Promise((resolve, reject) => {
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

/**
 * What a client at the public edge can send to the new code of issue 17:
 * TLS garbage, odd SNI and ALPN, HTTP/2 stream floods and rapid resets,
 * oversized and malformed credentials, broken `?token=`, forged
 * X-Forwarded-For. Each gets a 4xx or a closed connection, never a 5xx, and
 * nothing reaches the target unless allowed; the daemon serves on after.
 */
describe('tunnel: a hostile client at the edge', () => {
  let tunnel: Tunnel;
  let pki: TestPki;
  let tlsUrl: string;
  let hits = 0;
  let slowClosed = false;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const route = async (name: string, access: RouteUpdate = {}) => {
    const id = await tunnel.httpRoute(name, target.url, `${name}.test`);
    if (Object.keys(access).length) await tunnel.daemon.admin.call(operations.updateRoute, { params: { id }, body: access });
    return id;
  };
  /** The edge still answers a plain request and an HTTPS one. */
  const stillServing = async () => {
    expect((await edge(tunnel.daemon.edgeUrl, 'open.test', 'GET', '/alive')).status).toBe(200);
    expect((await tlsEdge(tlsUrl, 'open.test', '/alive', pki.ca)).status).toBe(200);
  };

  beforeAll(async () => {
    pki = makePki('hostile CA');
    target = await startTarget((req, res) => {
      hits++;
      req.resume();
      if (req.url !== '/slow') return void res.end(`hello ${req.url}`);
      // Answers once the whole body is in, which never happens: the edge must let go.
      req.on('end', () => res.end('slow'));
      req.on('close', () => (slowClosed = true));
    });
    tunnel = await startTunnel(
      [],
      ['--edge-tls-listen', '127.0.0.1:0', '--trusted-proxies', '127.0.0.1/32', '--request-timeout', '3s', '--headers-timeout', '2s'],
    );
    tlsUrl = tunnel.daemon.edgeTlsUrl!;
    const pair = pki.issueNames('edge', 61, ['open.test', 'basic.test', 'key.test']);
    await tunnel.daemon.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert + pki.ca, privateKey: pair.key } });
    await route('open');
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
    pki?.cleanup();
  });

  it('closes TLS garbage, plain HTTP on the TLS port and odd SNI or ALPN, and serves on', async () => {
    const port = Number(new URL(tlsUrl).port);
    expect(await raw(port, Buffer.alloc(4096, 0x41))).not.toMatch(/HTTP\/1\.1 5/);
    expect(await raw(port, 'GET / HTTP/1.1\r\nHost: open.test\r\n\r\n')).not.toMatch(/HTTP\/1\.1 5/);
    // A ClientHello cut short, then a TLS record header announcing 16 KiB that never come.
    expect(await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]))).toBe('');
    expect(await raw(port, Buffer.from([0x16, 0x03, 0x03, 0x40, 0x00]))).toBe('');
    // SNI: upper case is the same name; a long name, no name, or one no certificate covers: no certificate, no crash.
    expect(await servedFor(tlsUrl, 'OPEN.TEST', pki.ca)).toHaveProperty('serial');
    expect(await servedFor(tlsUrl, `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}`, pki.ca)).toHaveProperty(
      'error',
    );
    expect(await servedFor(tlsUrl, 'x.y.test', pki.ca)).toHaveProperty('error');
    const noSni = await new Promise<string>((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: pki.ca, rejectUnauthorized: false }, () => resolve('connected'));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(noSni).not.toBe('connected');
    // An ACME validator's ALPN for a name without a challenge under way: no certificate.
    const alpn = await new Promise<string>((resolve) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port, servername: 'open.test', ALPNProtocols: ['acme-tls/1'], rejectUnauthorized: false },
        () => {
          socket.destroy();
          resolve('connected');
        },
      );
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(alpn).not.toBe('connected');
    await stillServing();
  });

  it('offers 128 concurrent HTTP/2 streams, survives a rapid-reset flood, and serves on', async () => {
    const session = await h2session(tlsUrl, pki.ca, 'open.test');
    expect(session.remoteSettings.maxConcurrentStreams).toBe(128);
    // Streams opened and cancelled at once, as in CVE-2023-44487.
    for (let i = 0; i < 2_000 && !session.destroyed && !session.closed; i++) {
      const stream = session.request({ ':path': `/reset/${i}`, ':authority': 'open.test' });
      stream.on('error', () => {});
      stream.close(h2.NGHTTP2_CANCEL);
    }
    await new Promise((r) => setTimeout(r, 500));
    session.destroy();
    const fresh = await h2session(tlsUrl, pki.ca, 'open.test');
    const status = await new Promise<number>((resolve, reject) => {
      const stream = fresh.request({ ':path': '/after-flood', ':authority': 'open.test' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.resume();
      stream.end();
    });
    fresh.close();
    expect(status).toBe(200);
    await stillServing();
  });

  it("resets an HTTP/2 request whose body never ends after --request-timeout, and the target's request is let go", async () => {
    const session = await h2session(tlsUrl, pki.ca, 'open.test');
    const outcome = await new Promise<string>((resolve) => {
      const stream = session.request({ ':path': '/slow', ':method': 'POST', ':authority': 'open.test' }, { endStream: false });
      stream.write('a body that never ends');
      stream.on('response', (headers) => resolve(`status ${headers[':status']}`));
      stream.on('error', () => {});
      stream.on('close', () => resolve(`reset ${stream.rstCode}`));
    });
    session.destroy();
    expect(outcome).toBe(`reset ${h2.NGHTTP2_CANCEL}`);
    await until(() => slowClosed);
    await stillServing();
  });

  it('refuses oversized and malformed credentials and tokens with 4xx, none reaching the target', async () => {
    await route('basic', { auth: 'basic', basicUsers: [{ username: 'alice', password: 'wonderland-1' }] });
    await route('key', { auth: 'apiKey' });
    const before = hits;
    const statuses: number[] = [];
    const plain = async (host: string, path: string, headers: Record<string, string> = {}) =>
      statuses.push((await edge(tunnel.daemon.edgeUrl, host, 'GET', path, undefined, headers)).status);
    const secure = async (host: string, path: string, headers: Record<string, string> = {}) =>
      statuses.push((await tlsEdge(tlsUrl, host, path, pki.ca, headers)).status);
    for (const send of [plain, secure]) {
      await send('basic.test', '/', { authorization: `Basic ${'QUFB'.repeat(5_000)}` }); // 20 KB: past the header limit
      await send('basic.test', '/', { authorization: basic('alice', 'x'.repeat(8_000)) });
      await send('basic.test', '/', { authorization: 'Basic !!!not-base64' });
      await send('basic.test', '/', { authorization: `Basic ${Buffer.from('no colon').toString('base64')}` });
      await send('basic.test', '/', { authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}` });
      await send('key.test', '/?token=%E0%A4%A');
      await send('key.test', '/?token=&token=%');
      await send('key.test', `/?token=${'k'.repeat(8_000)}`);
      await send('key.test', '/', { 'x-api-key': 'monctl_'.padEnd(4_000, 'z') });
      await send('key.test', '/', { authorization: 'Bearer' });
    }
    expect(
      statuses.every((s) => s === 401 || s === 431),
      statuses.join(','),
    ).toBe(true);
    expect(hits).toBe(before);
    // HTTP/2: a header list past the limit refuses the stream; the session and the daemon live on.
    const session = await h2session(tlsUrl, pki.ca, 'basic.test');
    const big = await new Promise<string>((resolve) => {
      const stream = session.request({ ':path': '/', ':authority': 'basic.test', authorization: `Basic ${'QUFB'.repeat(6_000)}` });
      stream.on('response', (headers) => resolve(String(headers[':status'])));
      stream.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      stream.on('close', () => resolve(`closed ${stream.rstCode}`));
      stream.end();
    });
    session.destroy();
    expect(big).not.toMatch(/^5/);
    expect(hits).toBe(before);
    await stillServing();
  });

  it('reads forged and garbage X-Forwarded-For from a trusted proxy as no client, never a 5xx', async () => {
    await route('allow', { ipAllow: ['10.0.0.0/8'] });
    const before = hits;
    const get = (xff: string) => edge(tunnel.daemon.edgeUrl, 'allow.test', 'GET', '/x', undefined, { 'x-forwarded-for': xff });
    for (const xff of [
      'garbage',
      '10.1.2.3, garbage',
      ' , ,, ',
      '::ffff:zzz',
      '999.1.1.1',
      `${'1.2.3.4,'.repeat(1_500)}10.1.1.1, ::1%eth0`,
      '[10.1.1.1]',
      '10.1.1.1:80',
    ]) {
      expect((await get(xff)).status, xff).toBe(403);
    }
    expect(hits).toBe(before);
    expect((await get('8.8.8.8, 10.1.1.1')).status).toBe(200);
    expect(hits).toBe(before + 1);
  });

  it('refuses wrong basic-auth passwords beyond the checks it can run at once with 429, and the right one gets through after', async () => {
    await route('flood', { auth: 'basic', basicUsers: [{ username: 'alice', password: 'wonderland-1' }] });
    const before = hits;
    const statuses = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        edge(tunnel.daemon.edgeUrl, 'flood.test', 'GET', '/', undefined, { authorization: basic('alice', `guess-${i}`) }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([401, 429]));
    expect(hits).toBe(before);
    expect(
      (await edge(tunnel.daemon.edgeUrl, 'flood.test', 'GET', '/', undefined, { authorization: basic('alice', 'wonderland-1') })).status,
    ).toBe(200);
    await stillServing();
  });

  it('logged no error for any of it', () => {
    expect(tunnel.daemon.logs.filter((l) => Number(l.level) >= 50).map((l) => l.msg)).toEqual([]);
    expect(tunnel.daemon.stderr()).not.toMatch(/Error|uncaught|unhandled/i);
  });
});
