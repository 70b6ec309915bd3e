import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { FRAME, FrameReader, frameHeader, MAX_CONTROL_FRAME, MAX_DATA_FRAME } from '../../src/tunnel/mux/frame.ts';
import { CONNECTION_WINDOW, CONTROL_SOFT_CAP, type MuxSession, PING_BURST, STREAM_WINDOW } from '../../src/tunnel/mux/session.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { closeAll, rawPeer, sleep, until } from './mux-helpers.ts';

/** Payloads as hex: quick to compare, and readable in a failure diff. */
type Event = { kind: 'data' | 'control'; type: number; id: number; payload: string } | { kind: 'invalid'; message: string };

const frame = (type: number, id: number, payload: Buffer | string = Buffer.alloc(0)) => {
  const body = Buffer.from(payload);
  return Buffer.concat([frameHeader(type, id, body.length), body]);
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** A FrameReader whose sink records events; consecutive DATA pieces of one stream are merged (splits vary). */
function recorder() {
  const raw: Array<{ kind: 'data' | 'control'; type: number; id: number; parts: Buffer[] } | { kind: 'invalid'; message: string }> = [];
  const pieces: Buffer[] = [];
  const reader = new FrameReader({
    data(id, piece) {
      pieces.push(piece);
      const last = raw.at(-1);
      if (last?.kind === 'data' && last.id === id) last.parts.push(Buffer.from(piece));
      else raw.push({ kind: 'data', type: FRAME.DATA, id, parts: [Buffer.from(piece)] });
    },
    control(type, id, payload) {
      raw.push({ kind: 'control', type, id, parts: [Buffer.from(payload)] });
    },
    invalid(message) {
      raw.push({ kind: 'invalid', message });
    },
  });
  const events = (): Event[] =>
    raw.map((e) => (e.kind === 'invalid' ? e : { kind: e.kind, type: e.type, id: e.id, payload: Buffer.concat(e.parts).toString('hex') }));
  return { reader, events, pieces };
}

/** Deterministic chunk sizes, so a failing split can be replayed. */
function splits(total: number, seed: number): number[] {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  const sizes: number[] = [];
  for (let left = total; left > 0; ) {
    const max = next() % 4 === 0 ? 20_000 : 12; // mostly tiny pieces (cut headers), sometimes big ones
    const n = Math.min(left, 1 + (next() % max));
    sizes.push(n);
    left -= n;
  }
  return sizes;
}

describe('tunnel mux: FrameReader', () => {
  const frames = [
    { type: FRAME.OPEN, id: 1, payload: Buffer.from('{"host":"127.0.0.1","port":8080}') },
    { type: FRAME.DATA, id: 1, payload: randomBytes(1000) },
    { type: FRAME.WINDOW, id: 1, payload: u32(65536) },
    { type: FRAME.DATA, id: 3, payload: randomBytes(MAX_DATA_FRAME) },
    { type: FRAME.FIN, id: 1, payload: Buffer.alloc(0) },
    { type: FRAME.DATA, id: 5, payload: Buffer.alloc(0) }, // empty DATA: no piece at all
    { type: FRAME.RST, id: 3, payload: Buffer.from('{"code":"ECONNRESET","message":"x"}') },
    { type: FRAME.WINDOW, id: 0, payload: u32(1 << 20) },
    { type: FRAME.PING, id: 0, payload: randomBytes(8) },
    { type: FRAME.PONG, id: 0, payload: randomBytes(8) },
    { type: FRAME.OPEN, id: 0xffffffff, payload: randomBytes(MAX_CONTROL_FRAME) },
    { type: FRAME.DATA, id: 0xffffffff, payload: randomBytes(3) },
    { type: FRAME.GOAWAY, id: 0, payload: Buffer.from('replaced') },
  ];
  const wire = Buffer.concat(frames.map((f) => frame(f.type, f.id, f.payload)));
  const expected: Event[] = frames
    .filter((f) => f.type !== FRAME.DATA || f.payload.length > 0)
    .map((f) => ({ kind: f.type === FRAME.DATA ? 'data' : 'control', type: f.type, id: f.id, payload: f.payload.toString('hex') }));

  it('parses a stream fed whole, passing DATA through without copies', () => {
    const { reader, events, pieces } = recorder();
    reader.push(wire);
    expect(events()).toEqual(expected);
    expect(pieces).toHaveLength(3);
    // Views of the chunk (compared as a boolean: a diff of two 300 KB ArrayBuffers takes minutes).
    expect(pieces.every((piece) => piece.buffer === wire.buffer)).toBe(true);
  });

  it('parses the same stream fed byte by byte', () => {
    const { reader, events } = recorder();
    for (let i = 0; i < wire.length; i++) reader.push(wire.subarray(i, i + 1));
    expect(events()).toEqual(expected);
  });

  it.each([1, 2, 3, 42, 1234, 99991])('parses the same stream in random splits (seed %i)', (seed) => {
    const { reader, events } = recorder();
    let off = 0;
    for (const n of splits(wire.length, seed)) {
      reader.push(Buffer.from(wire.subarray(off, off + n))); // separate chunks, as sockets give
      off += n;
    }
    expect(off).toBe(wire.length);
    expect(events()).toEqual(expected);
  });

  it.each([
    ['an unknown frame type', frameHeader(FRAME.GOAWAY + 1, 0, 0), /unknown frame type 8/],
    ['an oversized DATA frame', frameHeader(FRAME.DATA, 1, MAX_DATA_FRAME + 1), /exceeds/],
    ['an oversized control frame', frameHeader(FRAME.OPEN, 1, MAX_CONTROL_FRAME + 1), /exceeds/],
  ])('reports %s as invalid once and parses nothing after it', (_name, bad, message) => {
    for (const byteByByte of [false, true]) {
      const { reader, events } = recorder();
      const stream = Buffer.concat([frame(FRAME.PING, 0, 'ping1234'), bad, Buffer.alloc(MAX_DATA_FRAME + 1), frame(FRAME.FIN, 1)]);
      if (byteByByte) for (let i = 0; i < stream.length; i++) reader.push(stream.subarray(i, i + 1));
      else reader.push(stream);
      reader.push(frame(FRAME.FIN, 3));
      expect(events()).toHaveLength(2);
      expect(events()[0]).toMatchObject({ kind: 'control', type: FRAME.PING });
      expect(events()[1]).toMatchObject({ kind: 'invalid', message: expect.stringMatching(message) });
    }
  });
});

/** Waits for the session to die of a protocol error, and for it to cut the hostile connection. */
async function expectProtocolError(
  session: MuxSession,
  closed: Promise<Error | undefined>,
  raw: import('node:net').Socket,
  message: RegExp,
) {
  const err = (await closed) as Error & { code?: string };
  expect(err?.code).toBe('ERR_TUNNEL_PROTOCOL');
  expect(err.message).toMatch(message);
  expect(session.destroyed).toBe(true);
  expect(session.streamCount).toBe(0);
  // Not events.once: that rejects on the ECONNRESET the raw socket may well get.
  if (!raw.closed) await new Promise((resolve) => raw.once('close', resolve));
}

/** A raw socket plays the peer and writes frames by hand; the session must drop it, and nothing may throw. */
describe('tunnel mux: hostile peer', () => {
  afterEach(closeAll);
  const open1 = frame(FRAME.OPEN, 1, '{"host":"127.0.0.1","port":1}');

  it.each([
    ['garbage (an HTTP request)', false, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), /unknown frame type/],
    ['an unknown frame type', false, frame(9, 0, 'xx'), /unknown frame type 9/],
    ['a DATA frame over MAX_DATA_FRAME', false, Buffer.concat([open1, frameHeader(FRAME.DATA, 1, MAX_DATA_FRAME + 1)]), /exceeds/],
    ['an OPEN sent to the opener', true, frame(FRAME.OPEN, 2, '{"host":"h","port":1}'), /unexpected OPEN/],
    ['an OPEN of an even stream id', false, frame(FRAME.OPEN, 2, '{"host":"h","port":1}'), /unexpected OPEN/],
    ['a connection WINDOW of 0', false, frame(FRAME.WINDOW, 0, u32(0)), /bad connection WINDOW/],
    ['a stream WINDOW of 0', false, Buffer.concat([open1, frame(FRAME.WINDOW, 1, u32(0))]), /bad stream WINDOW/],
    ['a stream WINDOW past 2^31', false, Buffer.concat([open1, frame(FRAME.WINDOW, 1, u32(2 ** 31))]), /bad stream WINDOW/],
    // Credit only returns what was sent: nothing was sent yet, so any credit is too much.
    ['a stream WINDOW past the stream window', false, Buffer.concat([open1, frame(FRAME.WINDOW, 1, u32(1))]), /bad stream WINDOW/],
    ['a connection WINDOW past the connection window', false, frame(FRAME.WINDOW, 0, u32(1)), /bad connection WINDOW/],
    ['a PING flood', false, Buffer.concat(Array.from({ length: PING_BURST + 1 }, () => frame(FRAME.PING, 0, '12345678'))), /ping flood/],
    ['a WINDOW without its u32', false, frame(FRAME.WINDOW, 0, 'ab'), /bad connection WINDOW/],
    ['a stream id opened twice', false, Buffer.concat([open1, open1]), /opened twice/],
    ['a FIN on stream 0', false, frame(FRAME.FIN, 0), /frame type 2 on stream 0/],
    ['a PING on an open stream', false, Buffer.concat([open1, frame(FRAME.PING, 1, '12345678')]), /frame type 5 on a stream/],
  ])('drops a peer sending %s', async (_name, sessionIsOpener, bytes, message) => {
    const { session, raw, closed } = await rawPeer(sessionIsOpener);
    session.on('stream', (s: MuxStream) => s.pause());
    raw.resume(); // answers (PONGs) must not keep the raw side from seeing the end
    raw.write(bytes);
    await expectProtocolError(session, closed, raw, message);
  });

  it('drops a peer overrunning a stream window; unread streams do not take the connection window', async () => {
    // The acceptor never reads, so it never returns credit: one byte past the window is an overrun.
    const { session, raw, closed } = await rawPeer(false);
    const accepted: MuxStream[] = [];
    session.on('stream', (s: MuxStream) => {
      s.pause();
      accepted.push(s);
      s.on('error', () => {});
    });
    raw.write(open1);
    for (let sent = 0; sent < STREAM_WINDOW; sent += MAX_DATA_FRAME) raw.write(frame(FRAME.DATA, 1, randomBytes(MAX_DATA_FRAME)));
    await sleep(100); // exactly a full window is allowed
    expect(session.destroyed).toBe(false);
    expect(accepted[0].readableLength).toBe(STREAM_WINDOW);
    raw.resume(); // the connection credit returned on receipt must not keep the raw side from seeing the end
    raw.write(frame(FRAME.DATA, 1, 'x'));
    await expectProtocolError(session, closed, raw, /overran the window of stream 1/);
    expect(accepted[0].destroyed).toBe(true);

    // Every stream within its own window, the sum past the connection's: connection credit goes back
    // on receipt (issue 14), so data nobody reads never blocks the other streams; each stream's own
    // window bounds what it holds.
    const peer = await rawPeer(false);
    const held: MuxStream[] = [];
    peer.session.on('stream', (s: MuxStream) => {
      s.pause();
      held.push(s);
    });
    const full = Buffer.alloc(MAX_DATA_FRAME, 7);
    const streams = CONNECTION_WINDOW / STREAM_WINDOW + 1;
    for (let i = 0; i < streams; i++) {
      const id = 2 * i + 1;
      peer.raw.write(frame(FRAME.OPEN, id, '{}'));
      for (let sent = 0; sent < STREAM_WINDOW; sent += MAX_DATA_FRAME) peer.raw.write(frame(FRAME.DATA, id, full));
    }
    await until(() => held.length === streams && held.every((s) => s.readableLength === STREAM_WINDOW));
    expect(peer.session.destroyed).toBe(false);
  });

  it('survives frames for unknown streams and odd payloads without dying', async () => {
    const { session, raw } = await rawPeer(false);
    session.on('stream', (s: MuxStream) => s.pause());
    raw.write(
      Buffer.concat([
        frame(FRAME.DATA, 99, 'late bytes'),
        frame(FRAME.FIN, 99),
        frame(FRAME.RST, 99, 'not json'),
        frame(FRAME.WINDOW, 99, u32(5)),
        frame(FRAME.OPEN, 1, 'not json'),
        frame(FRAME.PONG, 0, 'short'),
        frame(FRAME.PING, 0, ''),
        frame(FRAME.OPEN, 3, '{}'),
        frame(FRAME.RST, 3, '{"code":{"x":1}}'),
      ]),
    );
    const replies: Buffer[] = [];
    raw.on('data', (c: Buffer) => replies.push(c));
    await sleep(200);
    expect(session.destroyed).toBe(false);
    const answer = Buffer.concat(replies);
    // The bad target is refused with a RST on stream 1, and the empty PING answered with a PONG.
    expect(answer.includes(frameHeader(FRAME.PONG, 0, 0))).toBe(true);
    expect(answer.toString()).toContain('BAD_TARGET');
    expect(session.streamCount).toBe(0);
  });

  it('stops reading a peer that does not read the answers it provokes, and goes on once it reads', async () => {
    // Every OPEN is refused with a RST (no stream slots): about 6 bytes of answer per byte received.
    const { session, raw, socket } = await rawPeer(false, { maxStreams: 0 });
    raw.pause();
    const opens = Buffer.concat(Array.from({ length: 50_000 }, (_, i) => frame(FRAME.OPEN, 2 * i + 1, '{}')));
    for (let i = 0; i < 16; i++) raw.write(opens); // 8.8 MB of OPENs, 50 MB of RSTs if all were answered
    await until(() => socket.isPaused());
    await sleep(300);
    // Bounded by the soft cap and the answers to one socket chunk (64 KiB) read before pausing.
    expect(socket.writableLength).toBeLessThan(CONTROL_SOFT_CAP + 8 * 65536);
    expect(raw.writableLength).toBeGreaterThan(0); // the rest waits on the peer's side
    expect(session.destroyed).toBe(false);
    // The peer reads: the session reads on, answers everything, and lives.
    let answered = 0;
    raw.on('data', (c: Buffer) => {
      answered += c.length;
    });
    raw.resume();
    await until(() => raw.writableLength === 0 && !socket.isPaused() && answered > 16 * 50_000 * 9);
    expect(session.destroyed).toBe(false);
  });

  it('says a GOAWAY once, however often the peer sends it', async () => {
    const { session, raw } = await rawPeer(false);
    const reasons: string[] = [];
    session.on('goaway', (r: string) => reasons.push(r));
    raw.write(Buffer.concat(Array.from({ length: 100 }, () => frame(FRAME.GOAWAY, 0, 'bye'))));
    await sleep(100);
    expect(reasons).toEqual(['bye']);
  });
});
