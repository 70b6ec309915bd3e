import { afterEach, describe, expect, it } from 'vitest';
import { FRAME, FrameReader, frameHeader } from '../../src/tunnel/mux/frame.ts';
import { keepalive } from '../../src/tunnel/mux/keepalive.ts';
import { closeAll, rawPeer, sleep } from './mux-helpers.ts';

const TIMEOUT_MS = 300;
const frame = (type: number, payload: Buffer) => Buffer.concat([frameHeader(type, 0, payload.length), payload]);

/** Blocks the event loop, as a starved host does. */
const stall = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {}
};

async function watched() {
  const peer = await rawPeer(true);
  let dead = 0;
  let answers = 0;
  keepalive(peer.session, {
    intervalMs: 100,
    timeoutMs: TIMEOUT_MS,
    onDead: () => dead++,
    onAnswer: () => answers++,
  });
  return { ...peer, dead: () => dead, answers: () => answers };
}

describe('mux: keepalive judges a peer by any byte it sends, not only by its PONG', () => {
  afterEach(closeAll);

  it('keeps a peer whose PONG is late behind other bytes, and drops it once it goes silent', async () => {
    const peer = await watched();
    // The peer never answers a PING but keeps sending (a PONG nobody asked for stands in for the DATA a
    // busy agent queues ahead of its PONG): it is alive.
    const chatter = setInterval(() => peer.raw.write(frame(FRAME.PONG, Buffer.alloc(8))), 50);
    await sleep(6 * TIMEOUT_MS);
    expect(peer.dead()).toBe(0);
    clearInterval(chatter);
    const silentSince = Date.now();
    while (peer.dead() === 0 && Date.now() - silentSince < 10 * TIMEOUT_MS) await sleep(20);
    expect(peer.dead()).toBeGreaterThan(0);
  });

  it('reads a PONG that arrived during a stall before judging the peer', async () => {
    const peer = await watched();
    // The peer answers each PING at once, then the host stalls past the timeout before the session
    // reads the answer: the expired deadline must not count what already arrived as missing.
    const reader = new FrameReader({
      data: () => {},
      control: (type, _id, payload) => {
        if (type !== FRAME.PING) return;
        peer.raw.write(frame(FRAME.PONG, Buffer.from(payload)));
        stall(2 * TIMEOUT_MS);
      },
      invalid: () => {},
    });
    peer.raw.on('data', (c: Buffer) => reader.push(c));
    while (peer.answers() < 3) await sleep(20);
    expect(peer.dead()).toBe(0);
  });
});
