/**
 * One DNS question and its answer over TCP (RFC 1035 4.2.2; UDP is src/probes/udp-exchange.ts), with node's net:
 * node:dns's Resolver hides the rcode and cannot use TCP (docs/DECISIONS.md#dns-udp-and-tcp-sendexpect-checks).
 */
import { connect } from 'node:net';
import { NoAnswer, type Server, show } from '../udp-exchange.ts';

/** A DNS message is at most 65,535 bytes (TCP's two-byte length prefix); nothing more is ever buffered. */
export const MAX_ANSWER_BYTES = 65_535;

/** Sends `query` length-prefixed on a new TCP connection and reads one length-prefixed answer. */
export function tcpExchange(query: Buffer, server: Server, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    const timer = setTimeout(() => done(new NoAnswer(`no answer from ${show(server)} within ${timeoutMs} ms`)), timeoutMs);
    const chunks: Buffer[] = [];
    let length = 0;
    let finished = false;
    function done(err: Error | null, answer?: Buffer) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(answer!);
    }
    socket.on('error', (err) => done(new NoAnswer(`${(err as NodeJS.ErrnoException).code ?? 'error'}: ${err.message}`)));
    socket.on('close', () => done(new NoAnswer(`${show(server)} closed the connection before a whole answer`)));
    socket.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.length);
      socket.write(Buffer.concat([prefix, query]));
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length < 2) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      chunks.length = 0;
      chunks.push(all);
      // The prefix bounds what is buffered: at most 2 + 65,535 bytes.
      const size = all.readUInt16BE(0);
      if (length >= 2 + size) done(null, all.subarray(2, 2 + size));
    });
  });
}
