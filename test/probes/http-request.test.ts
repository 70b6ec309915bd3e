import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatchers, type Dispatchers } from '../../src/probes/dispatchers.ts';
import { probeHttp } from '../../src/probes/http-probe.ts';
import { createProbeRunner, type Prober } from '../../src/probes/runner.ts';
import type { HttpRequestSpec, ProbeInput } from '../../src/probes/types.ts';
import { freePort } from '../helpers/free-port.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

const RUNNER_TIMEOUT = 1_000; // lowered so that a resource's own, longer timeout shows
let prober: Prober;
let plain: Server;
let other: Server;
let mtls: Server;
let base: string;
let otherBase: string;
let mtlsUrl: string;
let pki: TestPki;
let client: { cert: string; key: string };
let mtlsConnections = 0;
let lastOtherHeaders: IncomingMessage['headers'] = {};

function listen(server: Server | NetServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** A client certificate (extendedKeyUsage clientAuth) signed by the test CA. */
function issueClient(dir: string, name = 'client'): { cert: string; key: string } {
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
  };
  writeFileSync(join(dir, 'client.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  const sign = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(100 + name.length), '-days', '1', '-extfile', 'client.ext'];
  run(['x509', '-req', '-in', `${name}.csr`, ...sign, '-out', `${name}.pem`]);
  return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

beforeAll(async () => {
  plain = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const hop = /^\/hop\/(\d+)\/(\d+)$/.exec(url.pathname);
    if (hop) {
      const [n, of] = [Number(hop[1]), Number(hop[2])];
      return void (n < of ? res.writeHead(302, { location: `/hop/${n + 1}/${of}` }).end() : res.end(`after ${n} hops`));
    }
    switch (url.pathname) {
      case '/post-only': {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const body = await readAll(req);
        return void res.writeHead(body === 'ping' && req.headers['content-type'] === 'text/plain' ? 200 : 400).end();
      }
      case '/method':
        return void res.writeHead(200, { 'x-method': req.method }).end(req.method);
      case '/echo-headers':
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.rawHeaders));
      case '/needs-key':
        return void res.writeHead(req.headers['x-api-key'] === 'k-123' ? 200 : 401).end();
      case '/basic':
        return void res.writeHead(req.headers.authorization === `Basic ${Buffer.from('ann:pa:ss').toString('base64')}` ? 200 : 401).end();
      case '/bearer':
        return void res.writeHead(req.headers.authorization === 'Bearer tok-9' ? 200 : 401).end();
      case '/slow':
        return void setTimeout(() => res.end('late'), Number(url.searchParams.get('ms'))).unref();
      case '/status':
        return void res.writeHead(Number(url.searchParams.get('code'))).end();
      case '/to-other':
        return void res.writeHead(302, { location: `${otherBase}/seen` }).end();
      case '/to-needs-key':
        return void res.writeHead(url.searchParams.get('code') === '303' ? 303 : 307, { location: '/needs-key' }).end();
      case '/json':
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'x-served-by': 'test' })
          .end(`{"status":"DOWN","pad":"${'x'.repeat(5000)}"}`);
      default:
        return void res.writeHead(404).end();
    }
  });
  base = `http://127.0.0.1:${await listen(plain)}`;
  other = createServer((req, res) => {
    lastOtherHeaders = req.headers;
    res.end('other');
  });
  otherBase = `http://127.0.0.1:${await listen(other)}`;
  pki = makePki();
  const server = pki.issue('server', 1);
  client = issueClient(pki.dir);
  mtls = createHttpsServer({ key: server.key, cert: server.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (_req, res) =>
    res.end('hello, client'),
  );
  mtls.on('secureConnection', () => mtlsConnections++);
  mtlsUrl = `https://127.0.0.1:${await listen(mtls)}/`;
  prober = createProbeRunner({ timeoutMs: RUNNER_TIMEOUT, credential: async () => undefined });
});

afterAll(async () => {
  await prober.close();
  for (const server of [plain, other, mtls]) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  pki.cleanup();
});

let nextId = 1;
function http(target: string, spec: Partial<HttpRequestSpec> = {}, extra: Partial<ProbeInput> = {}): ProbeInput {
  const full: HttpRequestSpec = {
    method: 'GET',
    headers: [],
    body: null,
    contentType: null,
    auth: null,
    clientCert: null,
    followRedirects: true,
    expectStatus: null,
    ...spec,
  };
  return { resourceId: nextId++, type: 'HTTP', target, skipTLS: false, recursive: false, http: full, ...extra };
}

describe('the request', () => {
  it('sends the method, the body and its content type (text/plain by default)', async () => {
    expect(await prober.probe(http(`${base}/post-only`))).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '405' });
    expect(await prober.probe(http(`${base}/post-only`, { method: 'POST', body: 'ping' }))).toMatchObject({ status: 'AVAILABLE' });
    for (const method of ['HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const r = await prober.probe(http(`${base}/method`, { method }), { report: true });
      expect(r.report?.response?.headers['x-method']).toBe(method);
    }
  });

  it('sends headers in order, the spec overriding the default user-agent', async () => {
    const r = await prober.probe(
      http(`${base}/echo-headers`, {
        headers: [
          ['User-Agent', 'custom/1'],
          ['X-B', '2'],
          ['X-A', '1'],
        ],
      }),
      { report: true },
    );
    const raw = JSON.parse(r.report?.response?.body ?? '[]') as string[];
    const names = raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.filter((n) => n.startsWith('x-'))).toEqual(['x-b', 'x-a']);
    expect(raw[raw.findIndex((n) => n.toLowerCase() === 'user-agent') + 1]).toBe('custom/1');
    expect(names.filter((n) => n === 'user-agent')).toHaveLength(1);
    expect(names).toContain('accept');
  });

  it('needs its header, basic or bearer auth', async () => {
    expect(await prober.probe(http(`${base}/needs-key`))).toMatchObject({ errorCode: '401' });
    expect(await prober.probe(http(`${base}/needs-key`, { headers: [['X-Api-Key', 'k-123']] }))).toMatchObject({ status: 'AVAILABLE' });
    const basic = { type: 'basic' as const, username: 'ann', password: 'pa:ss' };
    expect(await prober.probe(http(`${base}/basic`, { auth: basic }))).toMatchObject({ status: 'AVAILABLE' });
    expect(await prober.probe(http(`${base}/basic`))).toMatchObject({ errorCode: '401' });
    expect(await prober.probe(http(`${base}/bearer`, { auth: { type: 'bearer', token: 'tok-9' } }))).toMatchObject({ status: 'AVAILABLE' });
  });

  it('presents a client certificate (mTLS) only for the resource that has one', async () => {
    const without = await prober.probe(http(mtlsUrl, {}, { skipTLS: true }));
    expect(without).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    const withCert = await prober.probe(http(mtlsUrl, { clientCert: client }, { skipTLS: true }), { report: true });
    expect(withCert).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
    expect(withCert.report?.response?.body).toBe('hello, client');
    expect(withCert.certNotAfter).toBeGreaterThan(Date.now());
    // The shared pool still has no certificate.
    expect(await prober.probe(http(mtlsUrl, {}, { skipTLS: true }))).toMatchObject({ status: 'NOT_AVAILABLE' });
  });

  it('keeps at most N client-certificate pools, closing the least recently used', async () => {
    const second = issueClient(pki.dir, 'client-two');
    const tick = () => new Promise((r) => setImmediate(r));
    const checkWith = async (dispatchers: Dispatchers, clientCert: { cert: string; key: string }) => {
      const r = await probeHttp(mtlsUrl, true, dispatchers, 2_000, {
        conditions: null,
        maxBodyBytes: 0,
        http: http(mtlsUrl, { clientCert }).http,
      });
      expect(r).toMatchObject({ status: 'AVAILABLE' });
      await tick(); // undici frees the connection for its pool a tick after the answer ends
    };
    for (const [limit, connections] of [
      [256, 2], // A, B, A: A's pool and connection are kept
      [1, 3], // B evicts A's pool: A connects again
    ]) {
      const dispatchers = createDispatchers(2_000, { maxClientCertPools: limit });
      const before = mtlsConnections;
      try {
        for (const cert of [client, second, client]) await checkWith(dispatchers, cert);
      } finally {
        await dispatchers.close();
      }
      expect(mtlsConnections - before).toBe(connections);
    }
  });

  it('a client key that does not load is a connection error, not a crash', async () => {
    const r = await prober.probe(http(mtlsUrl, { clientCert: { cert: client.cert, key: 'not a key' } }, { skipTLS: true }));
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });
});

describe('redirects', () => {
  it('follows 10 hops; the 11th is a failure that says so', async () => {
    expect(await prober.probe(http(`${base}/hop/0/10`))).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
    expect(await prober.probe(http(`${base}/hop/0/11`))).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: 'more than 10 redirects (302 Found)',
      errorCode: '302',
    });
  });

  it('followRedirects false: the 3xx is the answer', async () => {
    expect(await prober.probe(http(`${base}/hop/0/1`, { followRedirects: false }))).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: '302 Found',
      errorCode: '302',
    });
    const expected = http(`${base}/hop/0/1`, { followRedirects: false, expectStatus: [[301, 302]] });
    expect(await prober.probe(expected)).toMatchObject({ status: 'AVAILABLE', message: '302 Found' });
  });

  it('a cross-origin hop drops Authorization but keeps other headers (undici)', async () => {
    const r = await prober.probe(http(`${base}/to-other`, { auth: { type: 'bearer', token: 'tok-9' }, headers: [['X-Api-Key', 'k-123']] }));
    expect(r).toMatchObject({ status: 'AVAILABLE' });
    expect(lastOtherHeaders.authorization).toBeUndefined();
    expect(lastOtherHeaders['x-api-key']).toBe('k-123');
  });

  it("a secret header goes to the check's own origin only: a cross-origin hop drops it, the plain ones follow", async () => {
    lastOtherHeaders = {};
    const r = await prober.probe(
      http(`${base}/to-other`, {
        headers: [
          ['X-Plain', 'p-1'],
          ['X-Api-Key', 'k-123'],
        ],
        secretHeaders: ['X-Api-Key'],
      }),
    );
    expect(r).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
    expect(lastOtherHeaders['x-plain']).toBe('p-1');
    expect(lastOtherHeaders['x-api-key']).toBeUndefined();
    // Same origin: the secret is still sent, after a 307 and after a 303 that turns a POST into a GET.
    const secret = { headers: [['X-Api-Key', 'k-123']] as [string, string][], secretHeaders: ['X-Api-Key'] };
    expect(await prober.probe(http(`${base}/to-needs-key`, secret))).toMatchObject({ status: 'AVAILABLE' });
    const post = { ...secret, method: 'POST' as const, body: 'x' };
    expect(await prober.probe(http(`${base}/to-needs-key?code=303`, post))).toMatchObject({ status: 'AVAILABLE' });
  });

  it('a check with secret headers still stops after 10 hops', async () => {
    const r = await prober.probe(http(`${base}/hop/0/20`, { headers: [['X-Api-Key', 'k']], secretHeaders: ['X-Api-Key'] }));
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '302' });
    expect(r.message).toMatch(/more than 10 redirects/);
    expect(await prober.probe(http(`${base}/hop/0/10`, { headers: [['X-Api-Key', 'k']], secretHeaders: ['X-Api-Key'] }))).toMatchObject({
      status: 'AVAILABLE',
    });
  });
});

describe('timeouts', () => {
  it("a resource's longer timeout outlasts the runner's", async () => {
    const late = `${base}/slow?ms=${RUNNER_TIMEOUT + 600}`;
    expect(await prober.probe(http(late))).toMatchObject({ message: `timeout after ${RUNNER_TIMEOUT} ms` });
    expect(await prober.probe(http(late, {}, { timeoutMs: 5_000 }))).toMatchObject({ status: 'AVAILABLE', message: '200 OK' });
  });

  it("a resource's shorter timeout cuts the check at its own time", async () => {
    const long = createProbeRunner({ timeoutMs: 10_000, credential: async () => undefined });
    try {
      const r = await long.probe(http(`${base}/slow?ms=3000`, {}, { timeoutMs: 300 }));
      expect(r).toMatchObject({ status: 'NOT_AVAILABLE', message: 'timeout after 300 ms', errorCode: 'CONNECTION_ERROR' });
      expect(r.durationMs).toBeLessThan(2_500);
    } finally {
      await long.close();
    }
  });
});

describe('the expected answer', () => {
  it('expectStatus replaces the 2xx rule; a miss keeps the status as errorCode', async () => {
    expect(await prober.probe(http(`${base}/status?code=404`, { expectStatus: [[404, 404]] }))).toMatchObject({ status: 'AVAILABLE' });
    expect(await prober.probe(http(`${base}/status?code=200`, { expectStatus: [[404, 404]] }))).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: '200',
    });
  });

  it('expectStatus set applies even when a condition reads [STATUS]; not set, the conditions decide', async () => {
    const conditions = ['[STATUS] == 503'];
    const decided = await prober.probe(http(`${base}/status?code=503`, {}, { conditions }));
    expect(decided).toMatchObject({ status: 'AVAILABLE' });
    const expectSet = await prober.probe(http(`${base}/status?code=503`, { expectStatus: [[200, 299]] }, { conditions }));
    expect(expectSet).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503' });
  });

  it('upsideDown flips an HTTP verdict, saying so', async () => {
    expect(await prober.probe(http(`${base}/status?code=503`, {}, { upsideDown: true }))).toMatchObject({
      status: 'AVAILABLE',
      message: 'upside down: 503 Service Unavailable',
      errorCode: null,
    });
    expect(await prober.probe(http(`${base}/status?code=200`, {}, { upsideDown: true }))).toMatchObject({
      status: 'NOT_AVAILABLE',
      message: 'upside down: the check passed (200 OK)',
      errorCode: 'UPSIDE_DOWN',
    });
  });

  it('upsideDown flips a TCP verdict', async () => {
    const port = await freePort();
    const r = await prober.probe({
      resourceId: nextId++,
      type: 'TCP',
      target: `127.0.0.1:${port}`,
      skipTLS: false,
      recursive: false,
      upsideDown: true,
    });
    expect(r.status).toBe('AVAILABLE');
    expect(r.errorCode).toBeNull();
    expect(r.message).toMatch(/^upside down: CONNECTION_ERROR .*ECONNREFUSED/);
  });
});

/**
 * A target that accepts and never writes: the TLS handshake (and a registry's plain-HTTP fallback)
 * waits for it. undici does not reject a request still waiting for its connection when its signal
 * aborts, so only the pool's connect timeout ends such a check: it must be the check's own.
 */
describe('a target that accepts and never answers', () => {
  const sockets = new Set<Socket>();
  const silent = createNetServer((socket) => sockets.add(socket.on('error', () => {})));
  let port = 0;
  beforeAll(async () => {
    port = await listen(silent);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => silent.close(r));
  });
  const input = (type: 'HTTP' | 'DOCKER', timeoutMs?: number): ProbeInput => ({
    resourceId: nextId++,
    type,
    target: type === 'HTTP' ? `https://127.0.0.1:${port}/` : `127.0.0.1:${port}/library/app:1`,
    skipTLS: false,
    recursive: false,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  // Generous bounds: a check held by a 120 s pool timeout is far past them.
  it.each(['HTTP', 'DOCKER'] as const)("%s: ends at the runner's timeout", async (type) => {
    const started = performance.now();
    const r = await prober.probe(input(type));
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE' });
    expect(r.message).toMatch(/timeout|timed out/i);
    expect(performance.now() - started).toBeLessThan(RUNNER_TIMEOUT * 2 + 4_000);
  });

  it.each(['HTTP', 'DOCKER'] as const)("%s: ends at the resource's own shorter timeout", async (type) => {
    const long = createProbeRunner({ timeoutMs: 30_000, credential: async () => undefined });
    try {
      const started = performance.now();
      const r = await long.probe(input(type, 300));
      expect(r).toMatchObject({ status: 'NOT_AVAILABLE' });
      expect(r.message).toMatch(/timeout|timed out/i);
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await long.close();
    }
  });
});
