import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotifierDispatcher, postJson } from '../../daemon/alerts/notifiers/http-post.ts';

let server: Server;
let base: string;
const dispatcher = createNotifierDispatcher(5_000);

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    switch (req.url) {
      case '/gzip':
        return void res.writeHead(400, { 'content-encoding': 'gzip' }).end(gzipSync('{"error":"channel_not_found"}'));
      case '/huge':
        return void res.writeHead(500).end(Buffer.alloc(5 * 1024 * 1024, 'x'));
      default:
        return void res.writeHead(403).end('no\r\n\tway');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const post = (path: string) => postJson(`${base}${path}`, '{}', {}, { dispatcher, timeoutMs: 5_000, signal: new AbortController().signal });

describe('postJson reads a refusal through the capped reader', () => {
  it('decodes a gzip excerpt', async () => {
    expect(await post('/gzip')).toMatchObject({ ok: false, statusCode: 400, error: 'HTTP 400: {"error":"channel_not_found"}' });
  });

  it('keeps 200 characters of a 5 MiB answer, on one line', async () => {
    expect((await post('/huge')).error).toBe(`HTTP 500: ${'x'.repeat(200)}…`);
    expect((await post('/plain')).error).toBe('HTTP 403: no way');
  });
});
