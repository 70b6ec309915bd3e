import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startTarget, startTunnel, type Tunnel, until } from './helpers.ts';
import { type RawResponse, rawGet, rawRequest } from './raw-http.ts';

const SECRET = 'FLAG{the-secret-must-stay-behind-the-prefix}';

/**
 * Issue 14, finding 1 (route prefix escape) and finding 9 (absolute-form): a
 * route `files.test` with prefix `/public/` in front of a lenient static file
 * server that also holds `secret/`. Requests go byte for byte over a raw socket.
 */
describe('tunnel: the edge keeps requests inside the route prefix', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let root: string;
  let filesRoute: number;
  const seen: string[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'monctl-files-'));
    mkdirSync(join(root, 'public'));
    mkdirSync(join(root, 'secret'));
    writeFileSync(join(root, 'public', 'hello.txt'), 'hello public');
    writeFileSync(join(root, 'secret', 'flag.txt'), SECRET);
    // Lenient as many servers are: `;` parameters dropped, every escape decoded, dot-segments resolved
    // by path.join, and only the escape from its root directory refused.
    target = await startTarget((req, res) => {
      const url = req.url!;
      seen.push(url);
      const path = url
        .split('?')[0]
        .split('/')
        .map((s) => s.split(';')[0])
        .join('/');
      let file = '';
      try {
        file = join(root, decodeURIComponent(path));
      } catch {
        /* malformed: not found */
      }
      let body: Buffer | undefined;
      try {
        if (file.startsWith(root + sep)) body = readFileSync(file);
      } catch {
        /* not found */
      }
      res.writeHead(body ? 200 : 404, { 'x-seen-url': url, 'x-forwarded-host-seen': String(req.headers['x-forwarded-host']) });
      res.end(body ?? 'not found');
    });
    target.server.on('upgrade', (req, socket) => {
      seen.push(req.url!);
      socket.end(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nseen ${req.url}`);
    });
    tunnel = await startTunnel();
    filesRoute = await tunnel.httpRoute('files', target.url, 'files.test', '/public/');
    await tunnel.httpRoute('api', target.url, 'files.test', '/api');
    await tunnel.daemon.admin.call(operations.createRoute, {
      body: { name: 'pkg', type: 'HTTP', agentId: tunnel.agentId, target: target.url, hostname: 'pkg.test', allowEncodedSlashes: true },
    });
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const get = (path: string, host = 'files.test') => rawGet(tunnel.daemon.edgeUrl, host, path);
  /** The edge answered itself (problem+json), and the target never saw the request. */
  const expectEdgeAnswer = (res: RawResponse, status: number) => {
    expect(res.body).not.toContain(SECRET);
    expect(res.status, res.body).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-seen-url']).toBeUndefined();
    return JSON.parse(res.body);
  };

  it('does not let dot-segments, plain or percent-encoded, leave the prefix', async () => {
    for (const path of [
      '/public/../secret/flag.txt',
      '/public/%2e%2e/secret/flag.txt',
      '/public/%2E%2E/secret/flag.txt',
      '/public/.%2e/secret/flag.txt',
      '/public/x/../../secret/flag.txt',
      '/public//../secret/flag.txt',
    ]) {
      const res = await get(path);
      expect(expectEdgeAnswer(res, 404), path).toMatchObject({ type: 'urn:monctl:problem:no-route' });
    }
    expect(seen.filter((u) => u.includes('secret'))).toEqual([]);
  });

  it('refuses with 400 what servers behind may read as a way out', async () => {
    for (const path of [
      '/public/..;/secret/flag.txt',
      '/public/..%2fsecret/flag.txt',
      '/public/..%5Csecret/flag.txt',
      '/public/../../secret/flag.txt',
      '/public/%2e%2e/%2e%2e/etc/passwd',
      '/public/a%00b',
      '/public/a%0d%0ab',
      '/public/..\\secret/flag.txt',
      '/public/.../secret/flag.txt',
      '/public/%zz',
    ]) {
      const res = await get(path);
      expect(expectEdgeAnswer(res, 400), path).toMatchObject({ status: 400, type: 'urn:monctl:problem:bad-request-target' });
    }
    expect(seen.filter((u) => u.includes('secret') || u.includes('passwd'))).toEqual([]);
  });

  it('forwards the normalised path it matched, with the query string untouched', async () => {
    for (const [path, forwarded] of [
      ['/public/./hello.txt', '/public/hello.txt'],
      ['/public//hello.txt', '/public/hello.txt'],
      ['/public/x/../hello.txt', '/public/hello.txt'],
      ['/public/%68ello.txt?next=/public/../secret&x=%2e%2e', '/public/hello.txt?next=/public/../secret&x=%2e%2e'],
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.body).toBe('hello public');
      expect(res.headers['x-seen-url']).toBe(forwarded);
    }
  });

  it('matches a prefix at a segment boundary only', async () => {
    expect(expectEdgeAnswer(await get('/apix'), 404)).toMatchObject({ type: 'urn:monctl:problem:no-route' });
    expect(expectEdgeAnswer(await get('/publicity'), 404)).toMatchObject({ type: 'urn:monctl:problem:no-route' });
    expect((await get('/api')).headers['x-seen-url']).toBe('/api');
    expect((await get('/api/x')).headers['x-seen-url']).toBe('/api/x');
    // A prefix given with its trailing slash does not take the bare name.
    expect(expectEdgeAnswer(await get('/public'), 404)).toMatchObject({ type: 'urn:monctl:problem:no-route' });
  });

  it('refuses encoded slashes unless the route allows them, and logs the refusal on the route', async () => {
    const refused = await get('/public/a%2fb.txt');
    expect(expectEdgeAnswer(refused, 400).detail).toMatch(/encoded slash/);
    const allowed = await get('/pkg/@scope%2fname?v=1', 'pkg.test');
    expect(allowed.headers['x-seen-url']).toBe('/pkg/@scope%2Fname?v=1');
    // Even where allowed, a dot-segment between encoded slashes is refused.
    expectEdgeAnswer(await get('/pkg/..%2f..%2fsecret/flag.txt', 'pkg.test'), 400);
    const entry = await until(async () => {
      const log = await tunnel.daemon.admin.call(operations.getRouteLog, { params: { id: filesRoute }, query: { limit: 50 } });
      return log.find((e) => e.path === '/public/a%2fb.txt');
    });
    expect(entry).toMatchObject({ status: 400, error: expect.stringMatching(/encoded slash/) });
  });

  it('routes WebSocket upgrades on the same normalised path', async () => {
    const upgrade = (path: string) =>
      rawRequest(tunnel.daemon.edgeUrl, `GET ${path} HTTP/1.1\r\nHost: files.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    const escaped = await upgrade('/public/%2e%2e/secret/flag.txt');
    expect(escaped.status).toBe(404);
    expect(escaped.body).not.toMatch(/seen/);
    expect((await upgrade('/public/..;/secret/flag.txt')).status).toBe(400);
    const ok = await upgrade('/public/./ws');
    expect(ok.status).toBe(101);
    expect(ok.body).toBe('seen /public/ws');
  });

  it('routes absolute-form requests by their authority and forwards origin-form (RFC 9112 section 3.2.2)', async () => {
    const res = await rawGet(tunnel.daemon.edgeUrl, 'elsewhere.test', 'http://files.test/public/hello.txt?q=1');
    expect(res.status, res.body).toBe(200);
    expect(res.body).toBe('hello public');
    expect(res.headers['x-seen-url']).toBe('/public/hello.txt?q=1');
    expect(res.headers['x-forwarded-host-seen']).toBe('files.test');
    expect((await rawGet(tunnel.daemon.edgeUrl, 'files.test', 'HTTP://FILES.TEST:80/public/hello.txt')).body).toBe('hello public');
    expect(
      expectEdgeAnswer(await rawGet(tunnel.daemon.edgeUrl, 'files.test', 'http://files.test/public/../secret/flag.txt'), 404),
    ).toMatchObject({ type: 'urn:monctl:problem:no-route' });
    expectEdgeAnswer(await rawGet(tunnel.daemon.edgeUrl, 'files.test', 'http://user@files.test/public/hello.txt'), 400);
  });
});
