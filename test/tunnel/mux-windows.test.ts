import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialUpgrade } from '../../cli/agent/dial.ts';
import { FRAME, frameHeader, MAX_DATA_FRAME } from '../../src/tunnel/mux/frame.ts';
import { MuxSession, STREAM_WINDOW, STREAM_WINDOW_INITIAL } from '../../src/tunnel/mux/session.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import type { StreamWindows } from '../../src/tunnel/mux/windows.ts';
import { sendWindowOf, STREAM_WINDOW_HEADER, TUNNEL_PATH, TUNNEL_UPGRADE, WINDOW_GROWTH_HEADER } from '../../src/tunnel/protocol.ts';
import { startTunnel, type Tunnel } from './helpers.ts';
import { closeAll, digest, rawPeer, socketPair, until, writeAll } from './mux-helpers.ts';

const GROWING: StreamWindows = { initial: STREAM_WINDOW_INITIAL, max: STREAM_WINDOW };
const frame = (type: number, id: number, payload: Buffer | string = Buffer.alloc(0)) => {
  const body = Buffer.from(payload);
  return Buffer.concat([frameHeader(type, id, body.length), body]);
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/**
 * A daemon-like opener and an agent-like acceptor over loopback TCP, with the windows each side
 * took from the dial: `grows` both knew of window growth, otherwise one side is an older peer
 * (the daemon saw no announce, or the agent saw no answer): both keep the fixed 1 MiB.
 */
async function pair(grows: boolean) {
  const { server, client } = await socketPair();
  const opener = new MuxSession(server, { opener: true, ...(grows ? { receiveWindow: GROWING } : {}) });
  const acceptor = new MuxSession(client, { opener: false, sendWindow: sendWindowOf(grows ? String(STREAM_WINDOW_INITIAL) : undefined) });
  return {
    opener,
    acceptor,
    close: () => {
      opener.destroy();
      acceptor.destroy();
    },
  };
}

/** The agent side answers every stream with `size` bytes; the daemon side's stream is returned. */
async function download(p: Awaited<ReturnType<typeof pair>>, size: number): Promise<MuxStream> {
  p.acceptor.once('stream', (s: MuxStream) => s.end(Buffer.alloc(size, 7)));
  return p.opener.open({ host: 'x', port: 1 });
}

/** A ping each way: everything either side sent before has been received and handled. */
async function settle(p: Awaited<ReturnType<typeof pair>>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await new Promise((r) => p.opener.ping(r));
    await new Promise((r) => p.acceptor.ping(r));
  }
}

describe('tunnel mux: per-stream windows that grow (issue 25)', () => {
  const pairs: Array<{ close(): void }> = [];
  afterEach(async () => {
    for (const p of pairs.splice(0)) p.close();
    await closeAll();
  });

  it.each([
    ['both sides grow windows', true, STREAM_WINDOW_INITIAL],
    ['an older peer on either side', false, STREAM_WINDOW],
  ])('a stream nobody reads pulls one initial window: %s', async (_name, grows, expected) => {
    const p = await pair(grows);
    pairs.push(p);
    const stream = await download(p, 4 * STREAM_WINDOW);
    stream.pause();
    await until(() => stream.received >= expected);
    await settle(p);
    expect(stream.received).toBe(expected);
    expect(stream.recvWindow).toBe(expected);
  });

  it('a reader that paused until the peer used up its window gets the rest once it reads again', async () => {
    // The HTTP/2 edge pauses a tunnel stream while its client's window is full. Resumed, the stream
    // once asked for credit (_read) while most of the window still sat unread in its buffer, returned
    // none, and Node asked no more until the next DATA, which the blocked peer could not send: the
    // transfer stalled for good. Pieces of 10,000 bytes never land the request on a 64 KiB step.
    const p = await pair(true);
    pairs.push(p);
    const size = 4 * STREAM_WINDOW_INITIAL;
    p.acceptor.once('stream', (s: MuxStream) => void writeAll(s, Buffer.alloc(size, 3), 10_000));
    const stream = await p.opener.open({ host: 'x', port: 1 });
    stream.pause();
    let read = 0;
    stream.on('data', (c: Buffer) => (read += c.length));
    for (let round = 0; read < size; round++) {
      await until(() => stream.readableLength > 0 || stream.readableEnded);
      await settle(p); // the peer sent all its window allows
      const before = stream.received;
      stream.resume();
      await until(() => stream.readableLength === 0);
      stream.pause();
      await settle(p);
      if (read < size) expect(stream.received, `round ${round}: no credit came back after reading ${read} bytes`).toBeGreaterThan(before);
    }
    expect(read).toBe(size);
  });

  it('grows the window of a stream read quickly to the most, and a 100 MB download arrives whole', async () => {
    const p = await pair(true);
    pairs.push(p);
    const windows = new Set<number>();
    const stream = await download(p, 100 * 1024 * 1024);
    stream.on('data', () => windows.add(stream.recvWindow));
    const { bytes } = await digest(stream);
    expect(bytes).toBe(100 * 1024 * 1024);
    // Doubled from 128 KiB, one epoch at a time, never past the most.
    expect([...windows].sort((a, b) => a - b)).toEqual([128, 256, 512, 1024].map((k) => k * 1024));
  }, 120_000);

  it('a reader that took part of its answer and stopped holds no more than it took', async () => {
    const p = await pair(true);
    pairs.push(p);
    const stream = await download(p, 8 * STREAM_WINDOW);
    let read = 0;
    stream.on('data', (c: Buffer) => {
      read += c.length;
      if (read >= 3 * STREAM_WINDOW_INITIAL) stream.pause();
    });
    await until(() => read >= 3 * STREAM_WINDOW_INITIAL);
    await settle(p);
    expect(stream.received - read).toBeLessThanOrEqual(Math.max(STREAM_WINDOW_INITIAL, read) + MAX_DATA_FRAME);
  });

  it("the agent refuses a daemon's window out of range", () => {
    expect(sendWindowOf(undefined)).toEqual({ initial: STREAM_WINDOW, max: STREAM_WINDOW });
    expect(sendWindowOf('131072')).toEqual(GROWING);
    for (const bad of ['0', '1024', String(STREAM_WINDOW + 1), '12abc', '', '-5']) expect(() => sendWindowOf(bad)).toThrow(/stream window/);
  });

  it('drops a peer that overruns the negotiated initial window', async () => {
    const { session, raw, closed } = await rawPeer(true, { receiveWindow: GROWING });
    raw.resume();
    session.open({ host: 'x', port: 1 }).pause();
    raw.write(frame(FRAME.DATA, 1, Buffer.alloc(STREAM_WINDOW_INITIAL))); // exactly the window: fine
    raw.write(frame(FRAME.DATA, 1, 'x'));
    const err = (await closed) as Error & { code?: string };
    expect(err?.code).toBe('ERR_TUNNEL_PROTOCOL');
    expect(err.message).toMatch(/overran the window of stream 1/);
  });

  it('takes window growth up to the negotiated most, and drops a peer growing it past that', async () => {
    const { session, raw, closed } = await rawPeer(false, { sendWindow: GROWING });
    raw.resume();
    const accepted: MuxStream[] = [];
    session.on('stream', (s: MuxStream) => accepted.push(s));
    raw.write(frame(FRAME.OPEN, 1, '{}'));
    await until(() => accepted.length === 1);
    expect(accepted[0].sendCredit).toBe(STREAM_WINDOW_INITIAL);
    raw.write(frame(FRAME.WINDOW, 1, u32(STREAM_WINDOW - STREAM_WINDOW_INITIAL))); // grown to the most: fine
    await until(() => accepted[0].sendCredit === STREAM_WINDOW);
    expect(session.destroyed).toBe(false);
    raw.write(frame(FRAME.WINDOW, 1, u32(1)));
    const err = (await closed) as Error & { code?: string };
    expect(err?.code).toBe('ERR_TUNNEL_PROTOCOL');
    expect(err.message).toMatch(/bad stream WINDOW/);
  });
});

describe('tunnel: the daemon negotiates the window on the dial', () => {
  let tunnel: Tunnel;
  beforeAll(async () => {
    tunnel = await startTunnel();
  });
  afterAll(async () => {
    await tunnel?.close();
  });

  it.each([
    ['an agent announcing growth gets the small initial window', { [WINDOW_GROWTH_HEADER]: '1' }, String(STREAM_WINDOW_INITIAL)],
    ['an older agent (no announce) gets no header: the fixed 1 MiB', {}, undefined],
  ])('%s', async (_name, extra, expected) => {
    const url = new URL(TUNNEL_PATH, tunnel.daemon.url);
    const token = readFileSync(tunnel.tokenFile, 'utf8').trim();
    const headers = { Connection: 'Upgrade', Upgrade: TUNNEL_UPGRADE, Authorization: `Bearer ${token}`, ...extra };
    const answer = await dialUpgrade({ url, headers, timeoutMs: 10_000 }, (socket, fields) => {
      socket.destroy();
      return fields;
    });
    expect(answer[STREAM_WINDOW_HEADER]).toBe(expected);
  });
});
