import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { splice } from '../../src/tunnel/splice.ts';
import { closeAll, digest, muxPair, sha, until, writeAll } from './mux-helpers.ts';

/** A real TCP target on loopback; `onConnection` decides what it does with each connection. */
async function target(onConnection: (socket: net.Socket) => void) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

type Target = Awaited<ReturnType<typeof target>>;

/** The agent's job in miniature: every accepted stream is spliced to a TCP connection to the target. */
function spliceTo(port: number, outcomes: Array<Error | undefined>) {
  return (stream: MuxStream) => {
    const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    splice(stream, socket, (err) => outcomes.push(err));
  };
}

describe('tunnel mux: splice to a real TCP target', () => {
  let t: Target | undefined;
  afterEach(async () => {
    await closeAll();
    await t?.close();
    t = undefined;
  });

  it('relays 8 MB each way through a TCP echo, half-close included, and reports a clean finish', async () => {
    t = await target((socket) => socket.pipe(socket)); // echoes, and ends once the client has ended
    const { opener, acceptor } = await muxPair();
    const outcomes: Array<Error | undefined> = [];
    acceptor.on('stream', spliceTo(t.port, outcomes));
    const data = randomBytes(8 * 1024 * 1024);
    const s = opener.open({ kind: 'tcp' });
    const errors: Error[] = [];
    s.on('error', (e) => errors.push(e));
    const [, back] = await Promise.all([writeAll(s, data), digest(s)]);
    expect(back).toEqual({ sha: sha(data), bytes: data.length });
    await until(() => outcomes.length === 1);
    expect(outcomes).toEqual([undefined]);
    expect(errors).toEqual([]);
    await until(() => opener.streamCount === 0 && acceptor.streamCount === 0 && t!.sockets.size === 0);
  });

  it('turns a target reset into a stream error, never a clean end', async () => {
    t = await target((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const { opener, acceptor } = await muxPair();
    const outcomes: Array<Error | undefined> = [];
    acceptor.on('stream', spliceTo(t.port, outcomes));
    const s = opener.open({ kind: 'tcp' });
    let ended = false;
    s.on('end', () => (ended = true));
    s.resume();
    const failed = new Promise<Error>((resolve) => s.once('error', resolve));
    s.write('hello');
    expect(await failed).toBeInstanceOf(Error);
    expect(ended).toBe(false);
    await until(() => outcomes.length === 1);
    expect(outcomes[0]).toBeInstanceOf(Error);
  });

  it('cuts the target connection when the client side resets the stream', async () => {
    let connected = 0;
    t = await target((socket) => {
      connected++;
      socket.resume();
      socket.on('end', () => socket.end());
    }); // sends nothing back
    const { opener, acceptor } = await muxPair();
    const outcomes: Array<Error | undefined> = [];
    acceptor.on('stream', spliceTo(t.port, outcomes));
    const s = opener.open({ kind: 'tcp' });
    s.write('hello');
    await until(() => connected === 1);
    s.destroy();
    await until(() => t!.sockets.size === 0 && outcomes.length === 1);
    expect(outcomes[0]).toBeInstanceOf(Error);
    expect(acceptor.streamCount).toBe(0);
  });
});
