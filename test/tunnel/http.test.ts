import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTrustedProxies } from '../../daemon/http/client-ip.ts';
import { forwardHeaders, parseHttpTarget } from '../../daemon/tunnel/forward.ts';
import { NO_RULES } from '../../daemon/tunnel/rules.ts';
import { edge, startTarget, startTunnel, type Tunnel } from './helpers.ts';

/** End to end through real processes: edge → daemon → h2 tunnel → `monctl agent` → target. */
describe('tunnel: HTTP routes', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const seen: Array<{ method: string; url: string; headers: Record<string, unknown> }> = [];

  beforeAll(async () => {
    target = await startTarget((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      if (req.url === '/upload') {
        const hash = createHash('sha256');
        let size = 0;
        req.on('data', (c: Buffer) => {
          hash.update(c);
          size += c.length;
        });
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ size, sha256: hash.digest('hex') }));
        });
        return;
      }
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        let n = 0;
        const timer = setInterval(() => {
          res.write(`chunk ${n}\n`);
          if (++n === 5) {
            clearInterval(timer);
            res.end('done\n');
          }
        }, 20);
        return;
      }
      if (req.url?.startsWith('/status/')) {
        res.writeHead(Number(req.url.slice(8)), { 'x-target': 'yes', connection: 'x-secret', 'x-secret': 'hop' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'x-target': 'yes', 'set-cookie': ['a=1', 'b=2'] });
      res.end(`hello ${req.method} ${req.url}`);
    });
    tunnel = await startTunnel();
    await tunnel.httpRoute('app', target.url, 'app.test');
    await tunnel.httpRoute('app-api', `${target.url}/v2`, 'app.test', '/api');
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('forwards a GET with forwarded headers set and hop-by-hop headers dropped', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'app.test:8081', 'GET', '/hello?x=1', undefined, {
      connection: 'keep-alive, x-drop-me',
      'x-drop-me': '1',
      'x-keep': 'kept',
      'x-forwarded-for': '10.0.0.9',
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello GET /hello?x=1');
    expect(res.headers['x-target']).toBe('yes');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const got = seen.at(-1)!;
    expect(got.headers['x-keep']).toBe('kept');
    expect(got.headers['x-drop-me']).toBeUndefined();
    // The client is no trusted proxy: its X-Forwarded-For is replaced, not appended to.
    expect(got.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(got.headers['x-forwarded-proto']).toBe('http');
    expect(got.headers['x-forwarded-host']).toBe('app.test:8081');
    expect(got.headers['x-monctl-target']).toBeUndefined();
  });

  it('rewrites Forwarded and X-Real-IP: a client that is no trusted proxy cannot name another client', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'app.test:8081', 'GET', '/hello', undefined, {
      forwarded: 'for=6.6.6.6;proto=https;host=bank.example',
      'x-real-ip': '6.6.6.6',
    });
    expect(res.status).toBe(200);
    const got = seen.at(-1)!;
    // This hop's element only (RFC 7239; the host quoted, it holds a colon), and the peer as the real IP.
    expect(got.headers.forwarded).toBe('for=127.0.0.1;proto=http;host="app.test:8081"');
    expect(got.headers['x-real-ip']).toBe('127.0.0.1');
    await edge(tunnel.daemon.edgeUrl, 'app.test', 'GET', '/hello');
    expect([seen.at(-1)!.headers.forwarded, seen.at(-1)!.headers['x-real-ip']]).toEqual([
      'for=127.0.0.1;proto=http;host=app.test',
      '127.0.0.1',
    ]);
  });

  it("writes an IPv6 peer as a quoted, bracketed for= node, and keeps a trusted IPv6 proxy's Forwarded", () => {
    const target = parseHttpTarget('http://127.0.0.1:9/')!;
    const req = (headers: Record<string, string>) => ({ socket: { remoteAddress: '::1', encrypted: true }, headers }) as never;
    const sent = { forwarded: 'for="[2001:db8::7]";proto=https', 'x-forwarded-for': '2001:db8::7', 'x-real-ip': '6.6.6.6' };
    const untrusted = forwardHeaders(req(sent), { hostname: 'v6.test', rules: NO_RULES } as never, target, 'v6.test');
    expect([untrusted.forwarded, untrusted['x-real-ip']]).toEqual(['for="[::1]";proto=https;host=v6.test', '::1']);
    setTrustedProxies(['::1']);
    try {
      const trusted = forwardHeaders(req(sent), { hostname: 'v6.test', rules: NO_RULES } as never, target, 'v6.test');
      expect([trusted.forwarded, trusted['x-real-ip']]).toEqual([
        'for="[2001:db8::7]";proto=https, for="[::1]";proto=https;host=v6.test',
        '2001:db8::7',
      ]);
    } finally {
      setTrustedProxies([]);
    }
  });

  it('drops hop-by-hop headers of the response and relays bodyless statuses', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'app.test', 'GET', '/status/204');
    expect(res.status).toBe(204);
    expect(res.headers['x-target']).toBe('yes');
    expect(res.headers['x-secret']).toBeUndefined();
    const head = await edge(tunnel.daemon.edgeUrl, 'app.test', 'HEAD', '/hello');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('routes by the longest path prefix, appending the path to the target URL', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'APP.test', 'GET', '/api/items');
    expect(res.text).toBe('hello GET /v2/api/items');
    expect(seen.at(-1)!.headers.host).toBe(new URL(target.url).host);
  });

  it('streams a 20 MB POST body to the target intact', async () => {
    const body = randomBytes(20 * 1024 * 1024);
    const url = new URL(tunnel.daemon.edgeUrl);
    const result = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, method: 'POST', path: '/upload', agent: false, headers: { host: 'app.test' } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      // Chunked, in pieces: the edge cannot know the size up front.
      for (let at = 0; at < body.length; at += 256 * 1024) req.write(body.subarray(at, at + 256 * 1024));
      req.end();
    });
    expect(result.status).toBe(200);
    expect(JSON.parse(result.text)).toEqual({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
  });

  it('streams a chunked response as it is produced', async () => {
    const url = new URL(tunnel.daemon.edgeUrl);
    const chunks = await new Promise<string[]>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/stream', agent: false, headers: { host: 'app.test' } }, (res) => {
        expect(res.headers['transfer-encoding']).toBe('chunked');
        const got: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (c: string) => got.push(c));
        res.on('end', () => resolve(got));
      });
      req.on('error', reject);
      req.end();
    });
    expect(chunks.join('')).toBe('chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\ndone\n');
    // Produced 20 ms apart, so they arrive as several reads rather than one buffered body.
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('serves 100 concurrent requests', async () => {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => edge(tunnel.daemon.edgeUrl, 'app.test', 'GET', `/n/${i}`)));
    results.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.text).toBe(`hello GET /n/${i}`);
    });
  });

  it('reuses kept-alive tunnel connections without piling up listeners on them', async () => {
    // Sequential requests share one pooled stream; node:http re-arms its socket timeout on each,
    // which leaked a listener per request until the stream's setTimeout(0, cb) removed it.
    for (let i = 0; i < 30; i++) expect((await edge(tunnel.daemon.edgeUrl, 'app.test', 'GET', `/seq/${i}`)).status).toBe(200);
    expect(tunnel.daemon.stderr()).not.toMatch(/MaxListenersExceeded/);
  });

  it('answers 404 problem+json for an unknown host or path', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'nope.test', 'GET', '/x');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 404, instance: '/x' });
  });
});
