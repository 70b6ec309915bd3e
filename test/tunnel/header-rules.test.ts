import { type IncomingMessage, request } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveRoute } from '../../daemon/tunnel/route-table.ts';
import { compileRules, forwardPath, type RuleSource, responseHeaders } from '../../daemon/tunnel/rules.ts';
import { expectProblem, fieldsOf } from '../helpers/http.ts';
import { api } from '../tunnel-admin/helpers.ts';
import { startTarget, startTunnel, type Tunnel } from './helpers.ts';

/** What the echo target received: the request line's target and its headers, as it got them. */
interface Echo {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  echo: Echo;
}

/** The route with every rule: the target URL has a base path, the route a prefix it strips. */
const RULES = {
  pathPrefix: '/api',
  stripPrefix: true,
  hostHeader: 'internal.svc',
  requestHeaders: { set: { 'X-Team': 'blue', 'User-Agent': 'monctl-edge' }, remove: ['Cookie', 'x-debug'] },
  responseHeaders: { set: { 'X-Frame-Options': 'DENY' }, remove: ['x-powered-by', 'SERVER'] },
};

/**
 * Header and path rules end to end (docs/API.md#header-and-path-rules): one daemon (which trusts
 * 127.0.0.2 as a proxy), one agent, an echo target, requests and a WebSocket upgrade from a real client.
 */
describe('tunnel: header and path rules', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let edgePort: number;

  beforeAll(async () => {
    target = await startTarget((req, res) => {
      const body = JSON.stringify({ method: req.method, url: req.url, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json', 'x-powered-by': 'echo', server: 'echo/1', 'x-kept': 'yes' });
      res.end(body);
    });
    // A WebSocket-style upgrade: 101, then what it received as the first bytes of the new protocol.
    target.server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      const body = JSON.stringify({ method: req.method, url: req.url, headers: req.headers });
      socket.end(
        `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nX-Powered-By: echo\r\nX-Kept: yes\r\n\r\n${body}`,
      );
    });
    tunnel = await startTunnel([], ['--trusted-proxies', '127.0.0.2/32']);
    edgePort = Number(new URL(tunnel.daemon.edgeUrl).port);
    const create = async (body: Record<string, unknown>) => {
      const res = await api(tunnel.daemon, 'POST', '/admin/api/routes', { type: 'HTTP', agentId: tunnel.agentId, ...body });
      expect(res.status, res.text).toBe(200);
    };
    await create({ name: 'ruled', hostname: 'rules.test', target: `${target.url}/base`, ...RULES });
    await create({ name: 'plain', hostname: 'plain.test', target: target.url });
    await create({ name: 'kept-host', hostname: 'keep.test', target: target.url, preserveHost: true });
  });

  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  /** A GET to the edge from `localAddress` (127.0.0.2 is the trusted proxy), whole echo read. */
  function get(host: string, path: string, headers: Record<string, string> = {}, localAddress = '127.0.0.1'): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: edgePort, path, localAddress, agent: false, headers: { host, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${res.statusCode}: ${text}`));
          resolve({ status: res.statusCode, headers: res.headers, echo: JSON.parse(text) as Echo });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('sets and removes request headers, rewrites Host, strips the prefix before the base path', async () => {
    const { echo } = await get('rules.test', '/api/items?q=1', {
      cookie: 'session=secret',
      'X-Debug': '1',
      'x-team': 'red',
      'user-agent': 'curl/8',
      'x-other': 'kept',
    });
    expect(echo.url).toBe('/base/items?q=1');
    expect(echo.headers.host).toBe('internal.svc');
    expect(echo.headers['x-team']).toBe('blue');
    expect(echo.headers['user-agent']).toBe('monctl-edge');
    expect(echo.headers.cookie).toBeUndefined();
    expect(echo.headers['x-debug']).toBeUndefined();
    expect(echo.headers['x-other']).toBe('kept');
    // The prefix alone forwards the base path's root; the query stays.
    expect((await get('rules.test', '/api')).echo.url).toBe('/base/');
    expect((await get('rules.test', '/api?x=1')).echo.url).toBe('/base/?x=1');
  });

  it('sets and removes response headers, names matched whatever their case', async () => {
    const ruled = await get('rules.test', '/api/x');
    expect(ruled.headers['x-frame-options']).toBe('DENY');
    expect(ruled.headers['x-powered-by']).toBeUndefined();
    expect(ruled.headers.server).toBeUndefined();
    expect(ruled.headers['x-kept']).toBe('yes');
    const plain = await get('plain.test', '/api/x');
    expect([plain.headers['x-powered-by'], plain.headers.server, plain.headers['x-frame-options']]).toEqual(['echo', 'echo/1', undefined]);
  });

  it("changes nothing on a route without rules: the target URL's Host, the whole path", async () => {
    const { echo } = await get('plain.test', '/api/items', { 'x-team': 'red' });
    expect([echo.url, echo.headers.host, echo.headers['x-team']]).toEqual(['/api/items', new URL(target.url).host, 'red']);
  });

  it("passes the client's Host with preserveHost", async () => {
    expect((await get('keep.test:8443', '/x')).echo.headers.host).toBe('keep.test:8443');
  });

  it("replaces a client's forged X-Forwarded-For, -Proto and -Host rather than appending to them", async () => {
    const forged = {
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'bank.example',
      'x-real-ip': '6.6.6.6',
    };
    const { echo } = await get('plain.test', '/x', forged);
    expect(echo.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(echo.headers['x-forwarded-proto']).toBe('http');
    expect(echo.headers['x-forwarded-host']).toBe('plain.test');
    expect(echo.headers['x-real-ip']).toBe('127.0.0.1');
    expect(echo.headers.forwarded).toBe('for=127.0.0.1;proto=http;host=plain.test');
  });

  it("keeps and extends a trusted proxy's X-Forwarded-* and Forwarded", async () => {
    const proxied = {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'www.example.com',
      forwarded: 'for=203.0.113.9;proto=https',
    };
    const { echo } = await get('plain.test', '/x', proxied, '127.0.0.2');
    expect(echo.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.2');
    expect(echo.headers['x-forwarded-proto']).toBe('https');
    expect(echo.headers['x-forwarded-host']).toBe('www.example.com');
    expect(echo.headers['x-real-ip']).toBe('203.0.113.9');
    expect(echo.headers.forwarded).toBe('for=203.0.113.9;proto=https, for=127.0.0.2;proto=http;host=plain.test');
    // Without headers of its own, the proxy is this hop's client like any other.
    const bare = (await get('plain.test', '/x', {}, '127.0.0.2')).echo;
    expect([bare.headers['x-forwarded-for'], bare.headers['x-forwarded-proto'], bare.headers['x-forwarded-host']]).toEqual([
      '127.0.0.2',
      'http',
      'plain.test',
    ]);
  });

  it('applies the rules to a WebSocket upgrade, both ways', async () => {
    const { answer, echo } = await new Promise<{ answer: IncomingMessage; echo: Echo }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: edgePort,
        path: '/api/socket',
        agent: false,
        headers: {
          host: 'rules.test',
          connection: 'Upgrade',
          upgrade: 'websocket',
          cookie: 'session=secret',
          'x-forwarded-for': '6.6.6.6',
        },
      });
      req.on('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => {
        let text = head.toString('utf8');
        socket.setEncoding('utf8');
        socket.on('data', (c: string) => (text += c));
        socket.on('end', () => {
          socket.destroy();
          resolve({ answer: res, echo: JSON.parse(text) as Echo });
        });
      });
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    expect(answer.statusCode).toBe(101);
    expect(echo.url).toBe('/base/socket');
    expect([echo.headers.host, echo.headers['x-team'], echo.headers.cookie]).toEqual(['internal.svc', 'blue', undefined]);
    expect(echo.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect([answer.headers['x-frame-options'], answer.headers['x-powered-by'], answer.headers['x-kept']]).toEqual([
      'DENY',
      undefined,
      'yes',
    ]);
  });

  it('refuses rules that could break framing: Content-Length, Transfer-Encoding, CR/LF in a value', async () => {
    const base = { name: 'bad', type: 'HTTP', agentId: tunnel.agentId, hostname: 'bad.test', target: target.url };
    const post = (body: Record<string, unknown>) => api(tunnel.daemon, 'POST', '/admin/api/routes', { ...base, ...body });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ responseHeaders: { set: { 'Content-Length': '0' } } }, 'responseHeaders.set'],
      [{ responseHeaders: { remove: ['transfer-encoding'] } }, 'responseHeaders.remove[0]'],
      [{ requestHeaders: { set: { 'X-Evil': 'a\r\nX-Injected: 1' } } }, 'requestHeaders.set.X-Evil'],
      [{ responseHeaders: { set: { 'X-Evil': 'a\nb' } } }, 'responseHeaders.set.X-Evil'],
    ];
    for (const [body, field] of cases) {
      const fields = fieldsOf(expectProblem(await post(body), 400));
      expect(fields.join(' '), JSON.stringify(body)).toContain(field);
    }
  });
});

/** The compiled rules themselves, for what the API never lets through but a row written otherwise could hold. */
describe('tunnel: compiled header rules', () => {
  const route = (pathPrefix: string, source: Partial<RuleSource>) =>
    ({
      pathPrefix,
      rules: compileRules(
        { requestHeaders: {}, responseHeaders: {}, hostHeader: null, preserveHost: false, stripPrefix: false, ...source },
        pathPrefix,
      ),
    }) as LiveRoute;

  it('never touches framing headers nor sets a value that would end the header line', () => {
    const r = route('/', {
      responseHeaders: {
        set: { 'Content-Length': '0', 'Transfer-Encoding': 'chunked', 'X-Evil': 'a\r\nX-Injected: 1', 'X-Ok': 'ok' },
        remove: ['content-length'],
      },
    });
    expect(responseHeaders(r, ['Content-Length', '5', 'X-Ok', 'old'])).toEqual(['Content-Length', '5', 'X-Ok', 'ok']);
    // No rules: the very list the edge passed, no copy.
    const raw = ['Server', 'x'];
    expect(responseHeaders(route('/', {}), raw)).toBe(raw);
  });

  it('strips the prefix at a segment boundary only', () => {
    const api = route('/api', { stripPrefix: true });
    expect(['/api', '/api/', '/api/x?q', '/api?q', '/apix'].map((p) => forwardPath(api, p))).toEqual(['/', '/', '/x?q', '/?q', '/apix']);
    expect(forwardPath(route('/public/', { stripPrefix: true }), '/public/x')).toBe('/x');
    expect(forwardPath(route('/', { stripPrefix: true }), '/x')).toBe('/x');
    expect(forwardPath(route('/api', {}), '/api/x')).toBe('/api/x');
  });
});
