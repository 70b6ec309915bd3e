import { createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProbeRunner } from '../../src/probes/runner.ts';
import type { ProbeInput, TcpOptions } from '../../src/probes/types.ts';

const runner = createProbeRunner({ timeoutMs: 3_000, credential: async () => undefined });
let redis: Server;
let smtp: SMTPServer;
let silent: Server;
let closer: Server;
let flood: Server;
/** Bytes each test server received, in order of connections (the connect-only check sends none). */
const got: string[] = [];
const sockets = new Set<Socket>();

const listen = (server: Server) => new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const portOf = (server: Server) => (server.address() as { port: number }).port;

/** A Redis-like server: `PING\r\n` answers `+PONG\r\n`, anything else `-ERR`. */
function redisLike(socket: Socket) {
  sockets.add(socket);
  let seen = '';
  socket.on('data', (d) => {
    seen += String(d);
    got.push(String(d));
    if (seen.endsWith('\r\n')) socket.write(seen === 'PING\r\n' ? '+PONG\r\n' : '-ERR unknown command\r\n');
  });
  socket.on('close', () => {
    if (seen === '') got.push('');
    sockets.delete(socket);
  });
}

beforeAll(async () => {
  redis = createServer(redisLike);
  smtp = new SMTPServer({ banner: 'monctl test ESMTP', authOptional: true, disabledCommands: ['STARTTLS'], logger: false });
  silent = createServer((s) => void sockets.add(s));
  closer = createServer((s) => s.end('bye\r\n'));
  // Sends far more than the read cap and never stops.
  flood = createServer((s) => {
    sockets.add(s);
    const chunk = Buffer.alloc(16_384, 'x');
    const pump = () => {
      while (!s.destroyed && s.write(chunk));
      if (!s.destroyed) s.once('drain', pump);
    };
    s.on('error', () => undefined);
    pump();
  });
  for (const s of [redis, silent, closer, flood]) await listen(s);
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([redis, silent, closer, flood].map((s) => new Promise((r) => s.close(r))));
  await new Promise<void>((r) => smtp.close(r));
  await runner.close();
});

function check(port: number, options: Partial<TcpOptions> | null, extra: Partial<ProbeInput> = {}) {
  const tcp: TcpOptions | undefined = options
    ? { send: null, sendEncoding: 'text', expect: null, expectKind: 'text', ...options }
    : undefined;
  return runner.probe({
    resourceId: 1,
    type: 'TCP',
    target: `127.0.0.1:${port}`,
    skipTLS: false,
    recursive: false,
    options: tcp,
    ...extra,
  });
}
/** smtp-server keeps its net.Server as `server`. */
const smtpPort = () => (smtp as unknown as { server: Server }).server.address() as { port: number };

describe('TCP send/expect', () => {
  it('Redis-like PING → +PONG: AVAILABLE, [BODY] the reply', async () => {
    const result = await check(portOf(redis), { send: 'PING\r\n', expect: '+PONG' }, { conditions: ['[BODY] == +PONG'] });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(got.at(-1)).toBe('PING\r\n');
  });

  it('an answer that does not match is EXPECT_FAILED, showing what came escaped', async () => {
    const result = await check(portOf(redis), { send: 'PONG\r\n', expect: '+PONG' });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'EXPECT_FAILED' });
    expect(result.message).toBe('expected text "+PONG", got "-ERR unknown command\\r\\n"');
  });

  it('hex send and expect: the bytes themselves', async () => {
    const result = await check(portOf(redis), { send: '50494e470d0a', sendEncoding: 'hex', expect: '2b504f4e47', expectKind: 'hex' });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('an SMTP banner matched by a regex, without sending anything', async () => {
    const result = await check(smtpPort().port, { expect: '^220 .*ESMTP', expectKind: 'regex' });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const wrong = await check(smtpPort().port, { expect: '^554 ', expectKind: 'regex' }, { timeoutMs: 500 });
    expect(wrong).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'EXPECT_FAILED' });
    expect(wrong.message).toContain('"220 ');
  });

  it('a peer that closes before the expected bytes is EXPECT_FAILED with what came', async () => {
    const result = await check(portOf(closer), { expect: 'hello' });
    expect(result).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'EXPECT_FAILED',
      message: 'expected text "hello", got "bye\\r\\n"',
    });
  });

  it('a peer that sends nothing until the timeout is EXPECT_FAILED (it did connect)', async () => {
    const result = await check(portOf(silent), { expect: '+OK' }, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'EXPECT_FAILED', message: 'expected text "+OK", got "" (nothing)' });
  });

  it('a regex that never matches a peer that never stops: judged on the first 4 KiB', async () => {
    const result = await check(portOf(flood), { expect: 'y', expectKind: 'regex' }, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'EXPECT_FAILED' });
    expect(result.message).toMatch(/^expected regex "y", got "x{64}"…$/);
  });

  it('send alone: AVAILABLE once sent; a condition on [BODY] reads the first bytes', async () => {
    expect(await check(portOf(redis), { send: 'PING\r\n' })).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const result = await check(portOf(redis), { send: 'PING\r\n' }, { conditions: ['[BODY] == +PONG'] });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('without send and expect, a connect check as before: no bytes sent or read', async () => {
    const before = got.length;
    const result = await check(portOf(redis), null);
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null, message: `connected to 127.0.0.1:${portOf(redis)}` });
    // The server notes an empty entry when a connection closes without a byte.
    await vi.waitFor(() => expect(got.slice(before)).toEqual(['']));
  });

  it('a refused connection stays CONNECTION_ERROR', async () => {
    const gone = createServer();
    await listen(gone);
    const port = portOf(gone);
    await new Promise((r) => gone.close(r));
    expect(await check(port, { send: 'PING\r\n', expect: '+PONG' })).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'CONNECTION_ERROR',
    });
  });
});
