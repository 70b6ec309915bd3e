import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeRunner, type Prober } from '../../src/probes/runner.ts';
import type { HttpRequestSpec, ProbeInput } from '../../src/probes/types.ts';
import { freePort } from '../helpers/free-port.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

const SECRET = 'sekrit-token-4f1d';
const JSON_BODY = `{"status":"DOWN","pad":"${'x'.repeat(6000)}"}`;
let prober: Prober;
let plain: Server;
let secure: Server;
let tcp: TcpServer;
let port: number;
let securePort: number;
let tcpPort: number;
let pki: TestPki;
let connections = 0;

function listen(server: Server | TcpServer, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  plain = createServer((req, res) => {
    switch (req.url) {
      case '/gzip':
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-served-by': 'test' })
          .end(gzipSync(JSON_BODY));
      case '/br':
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' })
          .end(brotliCompressSync('{"status":"UP"}'));
      case '/down':
        return void res.writeHead(503).end('{"status":"DOWN"}');
      default:
        return void res.end('ok');
    }
  });
  plain.on('connection', () => connections++);
  port = await listen(plain);
  pki = makePki();
  const cert = pki.issue('server', 1);
  secure = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('secure'));
  securePort = await listen(secure);
  tcp = createTcpServer((socket) => socket.destroy());
  tcpPort = await listen(tcp);
  prober = createProbeRunner({ timeoutMs: 5_000, credential: async () => undefined });
});

afterAll(async () => {
  await prober.close();
  for (const server of [plain, secure]) server.closeAllConnections();
  for (const server of [plain, secure, tcp]) await new Promise((r) => server.close(r));
  pki.cleanup();
});

let nextId = 1;
function check(target: string, extra: Partial<ProbeInput> = {}): ProbeInput {
  return { resourceId: nextId++, type: 'HTTP', target, skipTLS: false, recursive: false, ...extra };
}

describe('timing', () => {
  it('a new connection has its phases; a reused one has no DNS, connect or TLS', async () => {
    const fresh = createProbeRunner({ timeoutMs: 5_000, credential: async () => undefined });
    try {
      const first = await fresh.probe(check(`http://127.0.0.1:${port}/`));
      // An IP literal needs no lookup: DNS is null, like a phase that did not happen.
      expect(first.timing).toMatchObject({ dnsMs: null, tlsMs: null });
      expect(first.timing?.connectMs).toBeGreaterThanOrEqual(0);
      expect(first.timing?.firstByteMs).toBeGreaterThanOrEqual(0);
      expect(first.timing?.totalMs).toBeGreaterThanOrEqual(first.timing?.firstByteMs ?? 0);
      // undici frees the connection for the pool a tick after the answer ends.
      await new Promise((r) => setImmediate(r));
      const before = connections;
      const again = await fresh.probe(check(`http://127.0.0.1:${port}/`));
      expect(connections).toBe(before);
      expect(again.timing).toMatchObject({ dnsMs: null, connectMs: null, tlsMs: null });
      expect(again.timing?.firstByteMs).toBeGreaterThanOrEqual(0);
    } finally {
      await fresh.close();
    }
  });

  it('a host name is looked up, and HTTPS has a TLS phase', async () => {
    const r = await prober.probe(check(`https://localhost:${securePort}/`, { skipTLS: true }));
    expect(r.status).toBe('AVAILABLE');
    expect(r.timing?.dnsMs).toBeGreaterThanOrEqual(0);
    expect(r.timing?.connectMs).toBeGreaterThanOrEqual(0);
    expect(r.timing?.tlsMs).toBeGreaterThanOrEqual(0);
  });

  it('TCP has connect but no first byte', async () => {
    const r = await prober.probe(check(`127.0.0.1:${tcpPort}`, { type: 'TCP' }));
    expect(r.status).toBe('AVAILABLE');
    expect(r.timing).toMatchObject({ dnsMs: null, tlsMs: null, firstByteMs: null });
    expect(r.timing?.connectMs).toBeGreaterThanOrEqual(0);
  });
});

describe('the report', () => {
  const conditions = ['[STATUS] == 200', '[BODY].status == UP', '[RESPONSE_TIME] < 10000'];
  const spec: HttpRequestSpec = {
    method: 'GET',
    headers: [['X-Secret', SECRET]],
    body: null,
    contentType: null,
    auth: { type: 'bearer', token: SECRET },
    clientCert: null,
    followRedirects: true,
    expectStatus: null,
  };

  it("has each condition's outcome in order, and the response's status, headers and first 4 KiB, decoded", async () => {
    const r = await prober.probe(check(`http://127.0.0.1:${port}/gzip`, { conditions, http: spec }), { report: true });
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY].status (DOWN) == UP' });
    expect(r.report?.conditions).toEqual([
      { condition: '[STATUS] == 200', ok: true, message: '[STATUS] (200) == 200' },
      { condition: '[BODY].status == UP', ok: false, message: '[BODY].status (DOWN) == UP' },
      expect.objectContaining({ condition: '[RESPONSE_TIME] < 10000', ok: true }),
    ]);
    expect(r.report?.response).toMatchObject({ status: 200, statusText: 'OK', bodyTruncated: true });
    expect(r.report?.response?.headers['x-served-by']).toBe('test');
    expect(r.report?.response?.body).toBe(JSON_BODY.slice(0, 4096));
    // Nothing of the request: neither the secret header nor the token.
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('reads the body without conditions (br), and shows conditions even when the status failed', async () => {
    const br = await prober.probe(check(`http://127.0.0.1:${port}/br`), { report: true });
    expect(br.report).toMatchObject({ conditions: [], response: { body: '{"status":"UP"}', bodyTruncated: false } });
    const down = await prober.probe(check(`http://127.0.0.1:${port}/down`, { conditions: ['[BODY].status == UP'] }), { report: true });
    expect(down).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503' });
    expect(down.report?.conditions).toEqual([{ condition: '[BODY].status == UP', ok: false, message: '[BODY].status (DOWN) == UP' }]);
  });

  it('no response: response null, conditions read with [CONNECTED] false', async () => {
    const closed = await freePort();
    const r = await prober.probe(check(`http://127.0.0.1:${closed}/`, { conditions: ['[CONNECTED] == true'] }), { report: true });
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(r.report).toEqual({
      conditions: [{ condition: '[CONNECTED] == true', ok: false, message: '[CONNECTED] (false) == true' }],
      response: null,
    });
  });

  it('is absent unless asked for', async () => {
    expect(await prober.probe(check(`http://127.0.0.1:${port}/gzip`))).not.toHaveProperty('report');
  });
});
