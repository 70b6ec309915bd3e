import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { type MuxOptions, MuxSession } from '../../src/tunnel/mux/session.ts';

/** Everything a test opened; `closeAll` (in afterEach) tears it down. */
const open = new Set<{ close(): Promise<void> }>();

export async function closeAll(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map((o) => o.close()));
}

export interface SocketPair {
  /** The accepted (server) side and the dialing (client) side of one loopback TCP connection. */
  server: net.Socket;
  client: net.Socket;
}

/** One real loopback TCP connection; the listener closes with the test. */
export async function socketPair(): Promise<SocketPair> {
  const listener = net.createServer();
  const sockets: net.Socket[] = [];
  const entry = {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => listener.close(() => r()));
    },
  };
  open.add(entry);
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const accepted = once(listener, 'connection') as Promise<[net.Socket]>;
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  sockets.push(client);
  const [[server]] = await Promise.all([accepted, once(client, 'connect')]);
  sockets.push(server);
  return { server, client };
}

export interface MuxPair {
  opener: MuxSession;
  acceptor: MuxSession;
  openerSocket: net.Socket;
  acceptorSocket: net.Socket;
}

/** Two sessions over one loopback connection: the daemon-like opener accepts, the agent-like acceptor dials. */
export async function muxPair(opts: { maxStreams?: number } = {}): Promise<MuxPair> {
  const { server, client } = await socketPair();
  const opener = new MuxSession(server, { opener: true });
  const acceptor = new MuxSession(client, { opener: false, ...opts });
  open.add({
    async close() {
      opener.destroy();
      acceptor.destroy();
    },
  });
  return { opener, acceptor, openerSocket: server, acceptorSocket: client };
}

/** A raw socket facing a MuxSession on the other end: the hostile peer writes frames by hand. */
export async function rawPeer(
  sessionIsOpener: boolean,
  opts: Omit<MuxOptions, 'opener'> = {},
): Promise<{
  session: MuxSession;
  raw: net.Socket;
  socket: net.Socket;
  closed: Promise<Error | undefined>;
}> {
  const { server, client } = await socketPair();
  const session = new MuxSession(server, { opener: sessionIsOpener, ...opts });
  open.add({
    async close() {
      session.destroy();
    },
  });
  client.on('error', () => {}); // the session cuts the connection under our writes: EPIPE/ECONNRESET are expected
  const closed = new Promise<Error | undefined>((resolve) => session.once('close', resolve));
  return { session, raw: client, socket: server, closed };
}

/** Resolves with the sha256 and length of everything the stream yields; rejects on its error. */
export function digest(stream: Duplex): Promise<{ sha: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let bytes = 0;
    stream.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
    });
    stream.once('end', () => resolve({ sha: hash.digest('hex'), bytes }));
    stream.once('error', reject);
  });
}

export function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Everything the stream yields, concatenated. */
export function collect(stream: Duplex): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on('data', (c: Buffer) => parts.push(c));
    stream.once('end', () => resolve(Buffer.concat(parts)));
    stream.once('error', reject);
  });
}

/** Writes `data` in chunks, honouring backpressure, then ends the stream. */
export async function writeAll(stream: Duplex, data: Buffer, chunk = 64 * 1024): Promise<void> {
  for (let off = 0; off < data.length; off += chunk) {
    if (!stream.write(data.subarray(off, off + chunk))) await once(stream, 'drain');
  }
  stream.end();
}

/** The first error a stream emits (the stream must error for the test to pass). */
export function errorOf(stream: Duplex): Promise<Error & { code?: string }> {
  return new Promise((resolve) => stream.once('error', resolve));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it holds: the test's own timeout bounds the wait, no timed assertion. */
export async function until(probe: () => boolean, everyMs = 10): Promise<void> {
  while (!probe()) await sleep(everyMs);
}
