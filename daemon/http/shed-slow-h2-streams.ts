import { constants, Http2ServerResponse, type Http2SecureServer, type Http2Session } from 'node:http2';
import { ReadRate, type SlowReaderLimits } from './shed-slow-readers.ts';

/**
 * An HTTP/2 response that counts the bytes written to its stream: what its
 * client took is that minus what still waits in the stream (node:http2 keeps
 * no such total). The compatibility API's `end(data)` writes through `write`.
 */
export class CountedH2Response extends Http2ServerResponse {
  written = 0;

  override write(chunk: string | Uint8Array, encoding?: BufferEncoding | ((err: Error) => void), cb?: (err: Error) => void): boolean {
    this.written +=
      typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk.byteLength;
    return super.write(chunk, encoding as BufferEncoding, cb);
  }
}

/**
 * Concurrent streams per HTTP/2 session on the HTTPS edge (browsers open at most 100), and
 * the streams a session may have shed before it is closed: as many as it may have open at once.
 */
export const H2_MAX_STREAMS = 128;

/**
 * Sheds HTTP/2 streams whose client does not take their response (without it, a
 * client announcing a receive window of 0 kept 128 streams per session, each a
 * tunnel stream and a target connection, for as long as it pinged). The
 * socket's unsent bytes say nothing here: nghttp2 hands the socket only what
 * the client's windows allow, the rest waits in each stream. So each stream
 * with bytes waiting is held to the HTTP/1.1 rule (`ReadRate`: the same floor
 * and window) and reset with CANCEL when too slow, as an HTTP/1.1 connection
 * is destroyed; the handler sees its response close (a proxied exchange resets
 * its tunnel stream, logged `client disconnected`). A session that has had
 * `H2_MAX_STREAMS` streams shed gets GOAWAY ENHANCE_YOUR_CALM and
 * is closed: it would otherwise start over with new streams for as long as
 * it likes.
 */
export function shedSlowH2Streams(server: Http2SecureServer, limits: SlowReaderLimits, onShed: () => void = () => {}): () => void {
  const rate = new ReadRate<CountedH2Response>(limits);
  const shedPerSession = new WeakMap<Http2Session, number>();
  server.on('request', (_req: unknown, res: unknown) => {
    if (!(res instanceof CountedH2Response)) return; // HTTP/1.1 (allowHTTP1): its socket is watched
    rate.add(res);
    res.once('close', () => rate.delete(res));
  });
  const timer = setInterval(() => {
    const now = Date.now();
    for (const res of rate.keys()) {
      const stream = res.stream;
      if (stream.destroyed || stream.closed) {
        rate.delete(res);
        continue;
      }
      const waiting = stream.bufferSize;
      if (!rate.tooSlow(res, waiting, res.written - waiting, now)) continue;
      onShed();
      const session = stream.session;
      stream.close(constants.NGHTTP2_CANCEL);
      if (!session || session.closed) continue;
      const shed = (shedPerSession.get(session) ?? 0) + 1;
      shedPerSession.set(session, shed);
      if (shed < H2_MAX_STREAMS) continue;
      // Graceful: no new streams, the open ones are still held to the floor. (destroy() right away
      // would close the TLS socket before the GOAWAY is out, and the client would not learn why.)
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      session.close();
    }
  }, rate.periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
