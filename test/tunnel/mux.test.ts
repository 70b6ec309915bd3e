import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { type MuxStream, StreamError } from '../../src/tunnel/mux/stream.ts';
import { STREAM_WINDOW } from '../../src/tunnel/mux/session.ts';
import { closeAll, collect, digest, errorOf, muxPair, sha, sleep, until, writeAll } from './mux-helpers.ts';

const MiB = 1024 * 1024;

/** Echo on the acceptor: every stream's bytes come back on it, and its FIN too. */
function echo(stream: MuxStream): void {
  stream.pipe(stream);
}

const closed = (s: MuxStream) => (s.closed ? Promise.resolve() : once(s, 'close'));

/** The multiplexer alone, two sessions over a real loopback TCP connection. */
describe('tunnel mux: streams over loopback TCP', () => {
  afterEach(closeAll);

  it('carries 20 MB each way at once on one stream, intact', async () => {
    const { opener, acceptor } = await muxPair();
    const up = randomBytes(20 * MiB);
    const down = randomBytes(20 * MiB);
    const atAcceptor = new Promise<ReturnType<typeof digest>>((resolve) =>
      acceptor.once('stream', (s: MuxStream, target) => {
        expect(target).toEqual({ kind: 'bulk' });
        resolve(digest(s));
        void writeAll(s, down);
      }),
    );
    const s = opener.open({ kind: 'bulk' });
    const [, gotDown, gotUp] = await Promise.all([writeAll(s, up), digest(s), atAcceptor.then((p) => p)]);
    expect(gotUp).toEqual({ sha: sha(up), bytes: up.length });
    expect(gotDown).toEqual({ sha: sha(down), bytes: down.length });
    await until(() => opener.streamCount === 0 && acceptor.streamCount === 0);
  });

  it('carries 200 concurrent streams of 64 KiB, none mixed up', async () => {
    const { opener, acceptor } = await muxPair();
    const targets: unknown[] = [];
    acceptor.on('stream', (s: MuxStream, target) => {
      targets.push(target);
      echo(s);
    });
    const payloads = Array.from({ length: 200 }, () => randomBytes(64 * 1024));
    const results = await Promise.all(
      payloads.map(async (p, i) => {
        const s = opener.open({ i });
        const [, back] = await Promise.all([writeAll(s, p, 8 * 1024), collect(s)]);
        return back;
      }),
    );
    results.forEach((back, i) => expect(sha(back), `stream ${i}`).toBe(sha(payloads[i])));
    expect(targets).toHaveLength(200);
    expect(new Set(targets.map((t) => (t as { i: number }).i)).size).toBe(200);
    await until(() => opener.streamCount === 0 && acceptor.streamCount === 0);
  });

  it('holds a reader that does not read to one stream window, the rest waits in the writer', async () => {
    const { opener, acceptor, openerSocket, acceptorSocket } = await muxPair();
    let accepted: MuxStream | undefined;
    acceptor.on('stream', (s: MuxStream) => {
      accepted = s;
      s.pause();
    });
    const data = randomBytes(10 * MiB);
    const s = opener.open({ kind: 'paused' });
    let refused = false;
    // Ignore backpressure on purpose: the Writable's own buffer takes it, nothing else may.
    for (let off = 0; off < data.length; off += 64 * 1024) if (!s.write(data.subarray(off, off + 64 * 1024))) refused = true;
    s.end();
    await until(() => (accepted?.readableLength ?? 0) >= STREAM_WINDOW);
    await sleep(300); // a sender ignoring the window would keep pushing meanwhile
    expect(refused).toBe(true);
    expect(accepted!.readableLength).toBeLessThanOrEqual(STREAM_WINDOW);
    expect(s.writableLength).toBeGreaterThanOrEqual(data.length - STREAM_WINDOW);
    // Neither the sender's socket nor the receiver's holds more than one window (plus frame headers).
    expect(openerSocket.bytesWritten).toBeLessThan(STREAM_WINDOW + 64 * 1024);
    expect(acceptorSocket.bytesRead).toBeLessThan(STREAM_WINDOW + 64 * 1024);
    const got = digest(accepted!);
    accepted!.resume(); // after an explicit pause(), a 'data' listener alone does not resume
    expect(await got).toEqual({ sha: sha(data), bytes: data.length });
  });

  it('keeps other streams flowing while one reader is paused', async () => {
    const { opener, acceptor } = await muxPair();
    const accepted: MuxStream[] = [];
    acceptor.on('stream', (s: MuxStream, target: { kind: string }) => {
      accepted.push(s);
      if (target.kind === 'paused') s.pause();
      else echo(s);
    });
    const stuck = opener.open({ kind: 'paused' });
    const stuckData = randomBytes(4 * MiB);
    const stuckDone = writeAll(stuck, stuckData);
    await until(() => (accepted[0]?.readableLength ?? 0) >= STREAM_WINDOW);
    const other = opener.open({ kind: 'echo' });
    const otherData = randomBytes(3 * MiB); // more than a stream window: needs credit returned while the first is stuck
    const [, back] = await Promise.all([writeAll(other, otherData), collect(other)]);
    expect(sha(back)).toBe(sha(otherData));
    expect(accepted[0].readableLength).toBeLessThanOrEqual(STREAM_WINDOW);
    const got = digest(accepted[0]);
    accepted[0].resume();
    await stuckDone;
    expect((await got).sha).toBe(sha(stuckData));
  });

  it('half-closes: the acceptor reads the end and still answers, nobody resets', async () => {
    const { opener, acceptor } = await muxPair();
    const errors: Error[] = [];
    const acceptorSide = new Promise<MuxStream>((resolve) => acceptor.once('stream', resolve));
    const s = opener.open({ kind: 'half' });
    s.on('error', (e) => errors.push(e));
    s.end('question');
    const a = await acceptorSide;
    a.on('error', (e) => errors.push(e));
    const asked = await collect(a); // resolves on 'end': the opener's FIN
    expect(asked.toString()).toBe('question');
    expect(a.writable).toBe(true);
    const answered = collect(s);
    a.end('answer after FIN');
    expect((await answered).toString()).toBe('answer after FIN');
    await Promise.all([closed(s), closed(a)]);
    expect(errors).toEqual([]);
    expect(s.errored).toBeNull();
    expect(a.errored).toBeNull();
    expect(opener.streamCount).toBe(0);
    expect(acceptor.streamCount).toBe(0);
  });

  it('passes a reset with its code and message both ways', async () => {
    const { opener, acceptor } = await muxPair();
    const accepted: MuxStream[] = [];
    acceptor.on('stream', (s: MuxStream) => accepted.push(s));
    const s1 = opener.open({ host: '127.0.0.1', port: 1 });
    await until(() => accepted.length === 1);
    const e1 = errorOf(s1);
    accepted[0].destroy(new StreamError('ECONNREFUSED', 'target connect ECONNREFUSED 127.0.0.1:1'));
    const err = await e1;
    expect(err).toBeInstanceOf(StreamError);
    expect(err.code).toBe('ECONNREFUSED');
    expect(err.message).toBe('target connect ECONNREFUSED 127.0.0.1:1');

    const s2 = opener.open({ kind: 'cancelled' });
    await until(() => accepted.length === 2);
    const e2 = errorOf(accepted[1]);
    s2.destroy(new StreamError('ECLIENTGONE', 'the client went away'));
    expect(await e2).toMatchObject({ code: 'ECLIENTGONE', message: 'the client went away' });

    const s3 = opener.open({ kind: 'destroyed without a reason' });
    await until(() => accepted.length === 3);
    const e3 = errorOf(accepted[2]);
    s3.destroy();
    expect((await e3).code).toBe('CANCEL');
    await until(() => opener.streamCount === 0 && acceptor.streamCount === 0);
  });

  // The peer's socket closing (FIN), the peer's socket reset (ECONNRESET here), and a local destroy
  // with a plain Error (the daemon's keepalive timeout): streams must see a tunnel code in every case,
  // or a dead tunnel would pass for the target's own ECONNRESET relayed in a RST.
  it.each(['peer destroy', 'peer reset', 'local keepalive timeout'] as const)(
    'errors every open stream with ERR_TUNNEL_CLOSED when the connection goes (%s)',
    async (how) => {
      const { opener, acceptor, acceptorSocket } = await muxPair();
      acceptor.on('stream', echo);
      const streams = [1, 2, 3].map((i) => opener.open({ i }));
      for (const s of streams) s.write('x');
      await until(() => acceptor.streamCount === 3);
      const errors = Promise.all(streams.map(errorOf));
      const closedSession = once(opener, 'close') as Promise<[(Error & { code?: string }) | undefined]>;
      if (how === 'peer destroy') acceptorSocket.destroy();
      else if (how === 'peer reset') acceptorSocket.resetAndDestroy();
      else opener.destroy(new Error('keepalive timeout'));
      for (const err of await errors) {
        expect(err).toBeInstanceOf(StreamError);
        expect(err.code).toBe('ERR_TUNNEL_CLOSED');
      }
      const [reason] = await closedSession;
      if (how === 'peer destroy') expect(reason?.code).toBe('ERR_TUNNEL_CLOSED');
      if (how === 'local keepalive timeout') {
        expect(reason?.message).toBe('keepalive timeout'); // 'close' keeps the caller's own error
        expect((await errors)[0].message).toBe('keepalive timeout');
      }
      expect(opener.destroyed).toBe(true);
      expect(opener.streamCount).toBe(0);
      expect(() => opener.open({ late: true })).toThrow(expect.objectContaining({ code: 'ERR_TUNNEL_CLOSED' }));
    },
  );

  it('announces GOAWAY with its reason, and open() refuses afterwards', async () => {
    const { opener, acceptor } = await muxPair();
    acceptor.on('stream', echo);
    const s = opener.open({ kind: 'before goaway' });
    await until(() => acceptor.streamCount === 1); // an OPEN racing the GOAWAY is refused, as it should be
    const goaway = once(opener, 'goaway');
    acceptor.goaway('replaced');
    expect(await goaway).toEqual(['replaced']);
    expect(() => opener.open({ kind: 'after goaway' })).toThrow(/replaced/);
    // A stream opened before GOAWAY still works.
    const [, back] = await Promise.all([writeAll(s, Buffer.from('still here')), collect(s)]);
    expect(back.toString()).toBe('still here');
  });

  it.each(['opener', 'acceptor'] as const)('close() on the %s ends the connection only after streams in flight finish', async (side) => {
    const pair = await muxPair();
    const { opener, acceptor } = pair;
    acceptor.on('stream', echo);
    const s = opener.open({ kind: 'in flight' });
    const received: Buffer[] = [];
    s.on('data', (c: Buffer) => received.push(c));
    s.write('one');
    await until(() => received.length > 0);
    const closing = pair[side];
    const other = side === 'opener' ? acceptor : opener;
    const goaway = once(other, 'goaway');
    const closes = Promise.all([once(opener, 'close'), once(acceptor, 'close')]);
    closing.close('maintenance');
    expect(await goaway).toEqual(['maintenance']);
    await sleep(200); // a close that does not wait would cut the stream meanwhile
    expect(opener.destroyed || acceptor.destroyed).toBe(false);
    s.end('two');
    await once(s, 'end');
    expect(Buffer.concat(received).toString()).toBe('onetwo');
    expect(s.errored).toBeNull();
    await closes;
  });

  it('a graceful close by the acceptor still delivers everything a slow reader has not taken yet', async () => {
    // The agent's SIGTERM: its streams are done (FIN sent), so it ends the connection. The daemon
    // may still hold up to a window of that response for a slow client: it must not be cut.
    const { opener, acceptor } = await muxPair();
    const payload = randomBytes(768 * 1024);
    acceptor.on('stream', (stream: MuxStream) => {
      stream.resume();
      stream.end(payload);
    });
    const s = opener.open({ kind: 'slow reader' });
    s.end();
    s.pause();
    await until(() => s.readableLength === payload.length); // all of it arrived, FIN included
    const openerClosed = once(opener, 'close');
    acceptor.close('agent shutting down');
    await sleep(200); // the acceptor has ended the connection by now
    expect(acceptor.streamCount).toBe(0);
    const collected = collect(s);
    s.resume(); // paused by hand: a 'data' listener alone does not resume it
    expect(sha(await collected)).toBe(sha(payload));
    expect(s.errored).toBeNull();
    await openerClosed;
  });

  it('measures a ping round trip, and fails pings of a dead session', async () => {
    const { opener, acceptor } = await muxPair();
    for (const session of [opener, acceptor]) {
      const ms = await new Promise<number>((resolve, reject) => session.ping((err, rtt) => (err ? reject(err) : resolve(rtt!))));
      expect(typeof ms).toBe('number');
      expect(ms).toBeGreaterThanOrEqual(0);
    }
    const inFlight = new Promise<Error | null>((resolve) => opener.ping((err) => resolve(err)));
    opener.destroy();
    expect(await inFlight).toMatchObject({ code: 'ERR_TUNNEL_CLOSED' });
    const after = new Promise<Error | null>((resolve) => opener.ping((err) => resolve(err)));
    expect(await after).toMatchObject({ code: 'ERR_TUNNEL_CLOSED' });
  });

  it('runs 2,000 short streams one after another without leaking streams or listeners', async () => {
    const { opener, acceptor, openerSocket, acceptorSocket } = await muxPair();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      acceptor.on('stream', echo);
      const listeners = () =>
        ['data', 'end', 'close', 'error', 'drain'].map((e) => openerSocket.listenerCount(e) + acceptorSocket.listenerCount(e));
      const before = listeners();
      for (let i = 0; i < 2000; i++) {
        const s = opener.open({ i });
        const back = collect(s);
        s.end(`message ${i}`);
        expect((await back).toString()).toBe(`message ${i}`);
        await closed(s);
      }
      await until(() => acceptor.streamCount === 0);
      expect(opener.streamCount).toBe(0);
      expect(listeners()).toEqual(before);
      await sleep(50); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
