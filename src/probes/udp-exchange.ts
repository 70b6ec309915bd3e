/**
 * One datagram out and one back, as DNS and UDP checks need: a connected socket, so that only the
 * target's datagrams arrive and an ICMP port unreachable surfaces as ECONNREFUSED.
 */
import { createSocket, type Socket } from 'node:dgram';
import { lookup } from 'node:dns';
import { isIP, isIPv6 } from 'node:net';

/** A datagram is at most 65,535 bytes: what one answer can hold, so nothing more is buffered. */
export const MAX_DATAGRAM_BYTES = 65_535;

export interface Server {
  host: string;
  port: number;
}

/** Why no answer came (the check's message); `silent`: nothing came within the timeout, rather than an error. */
export class NoAnswer extends Error {
  readonly silent: boolean;
  constructor(message: string, silent = false) {
    super(message);
    this.silent = silent;
  }
}

/**
 * Sends `payload` in one datagram from a connected socket and resolves with the first datagram
 * `accept` takes (others, a stray or late answer with another DNS id, are skipped) and the address
 * it came from. A host name is looked up first, within the same timeout.
 */
export function udpExchange(
  payload: Buffer,
  server: Server,
  timeoutMs: number,
  accept: (answer: Buffer) => boolean = () => true,
): Promise<{ answer: Buffer; address: string }> {
  return new Promise((resolve, reject) => {
    let socket: Socket | undefined;
    let address = server.host;
    const timer = setTimeout(() => done(new NoAnswer(`no answer from ${show(server)} within ${timeoutMs} ms`, true)), timeoutMs);
    let finished = false;
    function done(err: Error | null, answer?: Buffer) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket?.close();
      if (err) reject(err);
      else resolve({ answer: answer!, address });
    }
    const send = () => {
      if (finished) return;
      const s = createSocket({ type: isIPv6(address) ? 'udp6' : 'udp4', recvBufferSize: MAX_DATAGRAM_BYTES });
      socket = s;
      s.on('error', (err) => done(new NoAnswer(`${(err as NodeJS.ErrnoException).code ?? 'error'}: ${err.message}`)));
      s.on('message', (msg) => {
        if (accept(msg)) done(null, msg);
      });
      s.connect(server.port, address, () => {
        if (!finished) s.send(payload, (err) => err && done(new NoAnswer(err.message)));
      });
    };
    if (isIP(server.host) !== 0) return send();
    lookup(server.host, (err, ip) => {
      if (err) return done(new NoAnswer(`${err.code ?? 'error'}: ${err.message}`));
      address = ip;
      send();
    });
  });
}

/** `host:port`, IPv6 in brackets. */
export const show = (s: Server): string => (isIPv6(s.host) ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`);
