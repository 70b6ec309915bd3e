import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DialRefused, dialUpgrade } from '../../cli/agent/dial.ts';

/**
 * The agent's hand-written Upgrade dial (cli/agent/dial.ts) against a raw
 * server that answers byte-exact, including the awkward cases node:http used
 * to cover: the tunnel's first bytes in the same packet as the 101, a head
 * split into single bytes, refusals with a problem body, and garbage.
 */
let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A server that runs `answer` on each connection once the request head is in; resolves with its URL. */
async function rawServer(answer: (socket: Socket, request: string) => void): Promise<URL> {
  server = createServer((socket) => {
    let text = '';
    socket.on('data', (c) => {
      text += c.toString('latin1');
      if (text.includes('\r\n\r\n')) answer(socket, text);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/admin/tunnel`);
}

const dial = (url: URL, timeoutMs = 5_000) =>
  dialUpgrade({ url, headers: { Authorization: 'Bearer t0k' }, timeoutMs }, (socket) => {
    // What the session does: read everything from here on.
    const got: Buffer[] = [];
    socket.on('data', (c: Buffer) => got.push(c));
    return { socket, got };
  });

describe('the agent dial', () => {
  it('sends the upgrade request and keeps the bytes that came with the 101', async () => {
    let request = '';
    const url = await rawServer((socket, text) => {
      request = text;
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nFIRST');
      setTimeout(() => socket.end('SECOND'), 50);
    });
    const { socket, got } = await dial(url);
    await new Promise((r) => socket.once('end', r));
    expect(Buffer.concat(got).toString()).toBe('FIRSTSECOND');
    expect(request).toMatch(/^GET \/admin\/tunnel HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\nAuthorization: Bearer t0k\r\n\r\n$/);
  });

  it('reads a response head split into single bytes', async () => {
    const url = await rawServer((socket) => {
      const bytes = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nAB');
      let i = 0;
      const next = () => (i < bytes.length ? socket.write(bytes.subarray(i, ++i), () => setTimeout(next, 1)) : socket.end());
      next();
    });
    const { socket, got } = await dial(url);
    await new Promise((r) => socket.once('end', r));
    expect(Buffer.concat(got).toString()).toBe('AB');
  });

  it('turns a refusal into DialRefused with the problem detail, body read by its length or to the end', async () => {
    const problem = JSON.stringify({ status: 401, detail: 'invalid registration token' });
    let url = await rawServer((socket) =>
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/problem+json\r\nContent-Length: ${problem.length}\r\n\r\n${problem}`,
      ),
    );
    const refused = await dial(url).catch((e) => e);
    expect(refused).toBeInstanceOf(DialRefused);
    expect(refused).toMatchObject({ status: 401, message: 'daemon answered 401: invalid registration token' });
    await new Promise<void>((r) => server!.close(() => r()));
    // Kept open after a body of known length: the refusal must not wait for the close.
    url = await rawServer((socket) => socket.write('HTTP/1.1 429 Too Many Requests\r\nContent-Length: 4\r\n\r\nslow'));
    expect(await dial(url).catch((e) => e)).toMatchObject({ status: 429, message: 'daemon answered 429: slow' });
    await new Promise<void>((r) => {
      server!.close(() => r());
    });
    url = await rawServer((socket) => socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\ndraining'));
    expect(await dial(url).catch((e) => e)).toMatchObject({ status: 503, message: 'daemon answered 503: draining' });
  });

  it('fails clearly on garbage, an endless head, silence and a close without an answer', async () => {
    let url = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    expect((await dial(url).catch((e) => e)).message).toMatch(/^daemon answered something that is not HTTP/);
    await new Promise<void>((r) => server!.close(() => r()));
    url = await rawServer((socket) => socket.write(`HTTP/1.1 101 OK\r\nX: ${'a'.repeat(40_000)}`));
    expect((await dial(url).catch((e) => e)).message).toBe('daemon answered with an oversized response head');
    await new Promise<void>((r) => server!.close(() => r()));
    url = await rawServer(() => {});
    expect((await dial(url, 300).catch((e) => e)).message).toBe('daemon did not answer within 0.3 s');
    await new Promise<void>((r) => server!.close(() => r()));
    url = await rawServer((socket) => socket.end());
    expect((await dial(url).catch((e) => e)).message).toBe('daemon closed the connection without an answer');
  });

  it('never sends a token with a line break as a header of its own', async () => {
    const url = await rawServer(() => {});
    const err = await dialUpgrade({ url, headers: { Authorization: 'Bearer a\r\nX-Evil: 1' }, timeoutMs: 1_000 }, () => 0).catch((e) => e);
    expect(err.message).toMatch(/line break/);
  });
});
