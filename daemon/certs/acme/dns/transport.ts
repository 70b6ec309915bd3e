import { createSocket } from 'node:dgram';
import { isIPv6, connect } from 'node:net';

/** How long one exchange waits for its answer; a UDP query is sent again once before TCP is tried. */
const TIMEOUT_MS = 3_000;
const UDP_TRIES = 2;
const TRUNCATED = 1 << 9;

type Server = { host: string; port: number };

/** One UDP exchange: the answer with the request's ID from the server (a connected socket hears no one else). */
function udp(server: Server, message: Buffer): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIPv6(server.host) ? 'udp6' : 'udp4');
    const id = message.readUInt16BE(0);
    const done = (err: Error | undefined, answer?: Buffer) => {
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), TIMEOUT_MS);
    socket.on('error', (err) => done(err));
    socket.on('message', (answer) => {
      if (answer.length >= 12 && answer.readUInt16BE(0) === id) done(undefined, answer);
    });
    socket.connect(server.port, server.host, () => socket.send(message));
  });
}

/** One TCP exchange (RFC 1035 §4.2.2: each message after its two-byte length), for answers UDP truncated. */
function tcp(server: Server, message: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(TIMEOUT_MS, () => fail(new Error(`the DNS server ${server.host}:${server.port} did not answer over TCP`)));
    socket.on('error', fail);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      // A DNS message over TCP is 65535 bytes at most: the buffer is bounded by the length prefix.
      if (size < 2) return;
      const all = Buffer.concat(chunks);
      const length = all.readUInt16BE(0);
      if (all.length >= 2 + length) {
        socket.destroy();
        resolve(all.subarray(2, 2 + length));
      }
    });
    socket.on('end', () => fail(new Error('the DNS server closed the TCP connection before its answer')));
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(message.length);
    socket.write(Buffer.concat([prefix, message]));
  });
}

/**
 * Sends a DNS message to the server and returns its answer: over UDP (sent
 * twice at most), then over TCP when the answer is truncated. Throws when
 * the server does not answer.
 */
export async function exchange(server: Server, message: Buffer): Promise<Buffer> {
  for (let i = 0; i < UDP_TRIES; i++) {
    const answer = await udp(server, message);
    if (answer === undefined) continue;
    return answer.readUInt16BE(2) & TRUNCATED ? tcp(server, message) : answer;
  }
  throw new Error(`the DNS server ${server.host}:${server.port} did not answer (UDP, ${UDP_TRIES} tries of ${TIMEOUT_MS / 1000} s)`);
}
