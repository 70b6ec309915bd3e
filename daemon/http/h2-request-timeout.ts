import { constants, type Http2ServerRequest } from 'node:http2';

/**
 * HTTP/1.1's `requestTimeout` for an HTTP/2 stream, which node's HTTP/2
 * server does not apply: the request (headers and body) must have arrived
 * within `ms`, else the stream is reset (CANCEL). Without it a client could
 * hold its 128 streams per session open for good, each one a request waiting
 * at an agent, with a frame now and then keeping the session from idling out.
 * A reset rather than a 408: whoever holds the response (the tunnel's
 * forwarder) sees the stream close and lets go of the agent's stream.
 */
export function boundH2Request(req: Http2ServerRequest, ms: number): void {
  const stream = req.stream;
  if (stream.endAfterHeaders || ms <= 0) return;
  const timer = setTimeout(() => {
    if (stream.destroyed || stream.closed || stream.state.remoteClose) return;
    stream.close(constants.NGHTTP2_CANCEL);
  }, ms);
  timer.unref();
  stream.once('close', () => clearTimeout(timer));
}
