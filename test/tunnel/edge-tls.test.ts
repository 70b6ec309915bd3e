import { X509Certificate } from 'node:crypto';
import { connect as h2connect } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsClient, WebSocketServer } from 'ws';
import { operations } from '../../src/api/operations.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { edge, startTarget, startTunnel, type Tunnel, until } from './helpers.ts';
import { h2Request, servedFor, tlsEdge } from './tls-edge.ts';

/**
 * The HTTPS edge (`--edge-tls-listen`) with uploaded certificates: SNI picks
 * among three hostnames and a wildcard, HTTP/2 with 100 concurrent streams,
 * WebSocket over TLS, X-Forwarded-Proto, httpsRedirect, and a status page's
 * custom hostname. Hostnames resolve nowhere: SNI and Host are set by hand.
 */
describe('tunnel: the HTTPS edge', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let wss: WebSocketServer;
  let pki: TestPki;
  const certs: Record<string, { id: number; serial: string }> = {};
  const seen: Array<{ url: string; proto: unknown; host: unknown }> = [];
  let tlsUrl: string;

  const upload = async (name: string, serial: number, names: string[]) => {
    const pair = pki.issueNames(name, serial, names);
    const cert = await tunnel.daemon.admin.call(operations.uploadCertificate, {
      body: { certificate: pair.cert + pki.ca, privateKey: pair.key },
    });
    certs[name] = { id: cert.id, serial: new X509Certificate(pair.cert).serialNumber };
    return cert;
  };

  beforeAll(async () => {
    pki = makePki('edge test CA');
    // /h2/ requests are answered only once all 100 are in: they must be in flight at once.
    const held: Array<() => void> = [];
    target = await startTarget((req, res) => {
      seen.push({ url: req.url!, proto: req.headers['x-forwarded-proto'], host: req.headers['x-forwarded-host'] });
      const answer = () => res.end(`hello ${req.url}`);
      if (!req.url!.startsWith('/h2/')) return answer();
      held.push(answer);
      if (held.length === 100) held.splice(0).forEach((release) => release());
    });
    wss = new WebSocketServer({ server: target.server, path: '/ws' });
    wss.on('connection', (socket, req) => {
      socket.send(`hello ${req.headers['x-forwarded-proto']}`);
      socket.on('message', (data, binary) => socket.send(data, { binary }));
    });
    tunnel = await startTunnel([], ['--edge-tls-listen', '127.0.0.1:0']);
    tlsUrl = tunnel.daemon.edgeTlsUrl!;
    for (const host of ['a.test', 'b.test', 'c.test', 'x.w.test']) await tunnel.httpRoute(host.replaceAll('.', '-'), target.url, host);
    await upload('a', 11, ['a.test']);
    await upload('b', 12, ['b.test']);
    await upload('c', 13, ['c.test']);
    await upload('w', 14, ['*.w.test']);
  });
  afterAll(async () => {
    await tunnel?.close();
    wss?.close();
    await target?.close();
    pki?.cleanup();
  });

  it('picks the certificate by SNI among three hostnames and a wildcard, and none for other names', async () => {
    for (const [name, key] of [
      ['a.test', 'a'],
      ['b.test', 'b'],
      ['c.test', 'c'],
      ['x.w.test', 'w'],
      ['other.w.test', 'w'],
    ] as const) {
      expect(await servedFor(tlsUrl, name, pki.ca), name).toMatchObject({ serial: certs[key].serial });
    }
    // A wildcard covers one label only; unknown names get no certificate at all.
    expect(await servedFor(tlsUrl, 'y.x.w.test', pki.ca)).toHaveProperty('error');
    expect(await servedFor(tlsUrl, 'nobody.test', pki.ca)).toHaveProperty('error');
  });

  it('speaks TLS 1.2 and 1.3, and refuses older versions', async () => {
    const { port } = new URL(tlsUrl);
    const version = (options: import('node:tls').ConnectionOptions) =>
      new Promise<string>((resolve) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), servername: 'a.test', ca: pki.ca, ...options }, () => {
          resolve(socket.getProtocol() ?? '');
          socket.destroy();
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
      });
    expect(await version({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).toBe('TLSv1.2');
    expect(await version({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' })).toBe('TLSv1.3');
    // The client offers TLS 1.0 and 1.1 only (allowed on its side at security level 0): the edge answers a protocol_version alert.
    expect(await version({ minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })).toBe(
      'error ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    );
  });

  it('serves HTTP/1.1 over TLS with a verified chain and X-Forwarded-Proto https', async () => {
    const res = await tlsEdge(tlsUrl, 'b.test', '/over-tls?x=1', pki.ca);
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello /over-tls?x=1');
    expect(res.alpn).toBe('http/1.1');
    expect(seen.at(-1)).toMatchObject({ url: '/over-tls?x=1', proto: 'https', host: 'b.test' });
    await edge(tunnel.daemon.edgeUrl, 'b.test', 'GET', '/plain');
    expect(seen.at(-1)).toMatchObject({ url: '/plain', proto: 'http' });
  });

  it('serves HTTP/2 (ALPN h2) with 100 concurrent streams on one connection, all in flight at once', async () => {
    const before = seen.length;
    const session = h2connect(tlsUrl, { ca: pki.ca, servername: 'a.test' });
    await new Promise((resolve, reject) => {
      session.once('connect', resolve);
      session.once('error', reject);
    });
    expect((session.socket as import('node:tls').TLSSocket).alpnProtocol).toBe('h2');
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => h2Request(session, `/h2/${i}`, 'a.test')));
    session.close();
    results.forEach((r, i) => expect(r).toEqual({ status: 200, body: `hello /h2/${i}` }));
    const reached = seen.slice(before);
    expect(reached).toHaveLength(100);
    expect(reached.every((r) => r.proto === 'https' && r.host === 'a.test')).toBe(true);
  });

  it('passes a WebSocket upgrade over TLS (HTTP/1.1)', async () => {
    const options = { headers: { host: 'c.test' }, servername: 'c.test', ca: pki.ca };
    const client = new WsClient(`${tlsUrl.replace('https', 'wss')}/ws`, options);
    const received: string[] = [];
    client.on('message', (data) => received.push(String(data)));
    await new Promise((resolve, reject) => {
      client.once('open', resolve);
      client.once('error', reject);
    });
    client.send('ping over tls');
    await until(() => received.length === 2);
    expect(received).toEqual(['hello https', 'ping over tls']);
    const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
    client.close(1000);
    expect(await closed).toBe(1000);
  });

  it('redirects plain HTTP to HTTPS with 308 when the route says so, and serves HTTPS', async () => {
    const [route] = (await tunnel.daemon.admin.call(operations.listRoutes)).filter((r) => r.hostname === 'c.test');
    await tunnel.daemon.admin.call(operations.updateRoute, { params: { id: route.id }, body: { httpsRedirect: true } });
    const before = seen.length;
    const plain = await edge(tunnel.daemon.edgeUrl, 'c.test', 'GET', '/r/x?y=1');
    expect(plain.status).toBe(308);
    expect(plain.headers.location).toBe(`https://c.test:${new URL(tlsUrl).port}/r/x?y=1`);
    expect(seen.length).toBe(before); // never reached the target
    const secure = await tlsEdge(tlsUrl, 'c.test', '/r/x?y=1', pki.ca);
    expect(secure.status).toBe(200);
    // The access log is written in batches: wait for both entries (the route's WebSocket is in it too).
    const log = await until(async () => {
      const entries = (await tunnel.daemon.admin.call(operations.getRouteLog, { params: { id: route.id }, query: { limit: 10 } })).filter(
        (e) => e.path === '/r/x',
      );
      return entries.length >= 2 && entries;
    });
    expect(log.map((e) => [e.status, e.error])).toEqual([
      [200, null],
      [308, 'access: redirected to HTTPS'],
    ]);
  });

  it('lists certificates without keys, shows the route certificate state, and stops serving a deleted one', async () => {
    const list = await tunnel.daemon.admin.call(operations.listCertificates);
    expect(list.map((c) => [c.source, c.hostnames, c.state])).toEqual([
      ['UPLOAD', ['a.test'], 'VALID'],
      ['UPLOAD', ['b.test'], 'VALID'],
      ['UPLOAD', ['c.test'], 'VALID'],
      ['UPLOAD', ['*.w.test'], 'VALID'],
    ]);
    expect(list[0].issuer).toBe('CN=edge test CA');
    expect(list[0].notAfter).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(JSON.stringify(list)).not.toMatch(/PRIVATE KEY|privateKey/);
    const [route] = (await tunnel.daemon.admin.call(operations.listRoutes)).filter((r) => r.hostname === 'x.w.test');
    const detail = await tunnel.daemon.admin.call(operations.getRoute, { params: { id: route.id } });
    expect(detail.certificate).toMatchObject({ state: 'VALID', certificateId: certs.w.id, source: 'UPLOAD' });

    await tunnel.daemon.admin.call(operations.deleteCertificate, { params: { id: certs.w.id } });
    expect(await servedFor(tlsUrl, 'x.w.test', pki.ca)).toHaveProperty('error');
    expect((await tunnel.daemon.admin.call(operations.getRoute, { params: { id: route.id } })).certificate).toMatchObject({
      state: 'NONE',
    });
  });

  it('refuses an upload whose key does not match, or whose hostname it does not cover, naming the field', async () => {
    const a = pki.issueNames('mismatch-a', 21, ['m.test']);
    const b = pki.issueNames('mismatch-b', 22, ['m.test']);
    const call = (body: Record<string, unknown>) =>
      tunnel.daemon.admin.call(operations.uploadCertificate, { body: body as never }).then(
        () => undefined,
        (err) => err,
      );
    expect(await call({ certificate: a.cert, privateKey: b.key })).toMatchObject({ status: 400, errors: [{ field: 'privateKey' }] });
    expect(await call({ certificate: a.cert, privateKey: a.key, hostnames: ['n.test'] })).toMatchObject({
      status: 400,
      errors: [{ field: 'hostnames[0]' }],
    });
    expect(await call({ certificate: 'not pem', privateKey: a.key })).toMatchObject({ status: 400, errors: [{ field: 'certificate' }] });
  });

  it('serves a status page on its custom hostname over TLS, and redirects it from plain HTTP when the page says so', async () => {
    const page = await tunnel.daemon.admin.call(operations.createStatusPage, {
      body: { slug: 'main', title: 'Status', customHostname: 'status.test' },
    });
    expect(page.httpsRedirect).toBe(false);
    await upload('s', 31, ['status.test']);
    const res = await tlsEdge(tlsUrl, 'status.test', '/', pki.ca);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await edge(tunnel.daemon.edgeUrl, 'status.test', 'GET', '/')).status).toBe(200);

    await tunnel.daemon.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { httpsRedirect: true } });
    const port = new URL(tlsUrl).port;
    for (const path of ['/', '/?ref=x', '/api/status-pages/main/summary']) {
      const plain = await edge(tunnel.daemon.edgeUrl, 'STATUS.test', 'GET', path);
      expect(plain.status, path).toBe(308);
      expect(plain.headers.location).toBe(`https://status.test:${port}${path}`);
    }
    const secure = await tlsEdge(tlsUrl, 'status.test', '/', pki.ca);
    expect(secure.status).toBe(200);
    expect(secure.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await tlsEdge(tlsUrl, 'status.test', '/api/status-pages/main/summary', pki.ca)).status).toBe(200);
    // Other paths of the hostname are the routes' (none here), ACME's HTTP-01 among them: no redirect.
    expect((await edge(tunnel.daemon.edgeUrl, 'status.test', 'GET', '/.well-known/acme-challenge/abc')).status).toBe(404);
  });
});
