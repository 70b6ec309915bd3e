import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import type { Logger } from 'pino';
import { endToEndHeaders, H, relay } from '../../src/tunnel/protocol.ts';

interface Target {
  tls: boolean;
  protocol: string;
  host: string;
  hostname: string;
  port: string;
  /** The target URL's path without trailing slashes; the request path is appended. */
  base: string;
}

export interface ServeOptions {
  skipTls: boolean;
  /** Connect and time-to-response-headers limit towards targets; beyond it the client gets 504. */
  targetTimeoutMs: number;
  log: Logger;
}

/**
 * Serves the h2 streams the daemon opens on the tunnel: each carries one HTTP
 * request, WebSocket upgrade or TCP connection for a target on this side.
 */
export function createStreamHandler(opts: ServeOptions) {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256, rejectUnauthorized: !opts.skipTls });

  /** Answers the daemon when the target failed; the daemon turns it into problem+json. */
  const fail = (stream: ServerHttp2Stream, status: number, message: string) => {
    opts.log.warn({ status, error: message }, 'target failed');
    if (stream.destroyed || stream.closed) return;
    if (stream.headersSent) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    else stream.respond({ ':status': status, [H.error]: message.replace(/[\r\n]/g, ' ').slice(0, 300) }, { endStream: true });
  };

  const targetError = (err: NodeJS.ErrnoException) => `target ${err.code ?? ''} ${err.message}`.replace(/\s+/g, ' ').trim();

  /** Parsed targets: a route's target string is the same on every request. */
  const targets = new Map<string, Target | undefined>();
  const parseTarget = (raw: string): Target | undefined => {
    if (targets.has(raw)) return targets.get(raw);
    let parsed: Target | undefined;
    try {
      const url = new URL(raw);
      const tls = url.protocol === 'https:';
      if (tls || url.protocol === 'http:') {
        parsed = {
          tls, protocol: url.protocol, host: url.host, hostname: url.hostname.replace(/^\[|\]$/g, ''),
          port: url.port || (tls ? '443' : '80'), base: url.pathname.replace(/\/+$/, ''),
        };
      }
    } catch { /* invalid: undefined */ }
    if (targets.size > 1000) targets.clear();
    targets.set(raw, parsed);
    return parsed;
  };

  function request(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, upgrade: boolean): ClientRequest | undefined {
    const target = parseTarget(String(headers[H.target]));
    if (!target) {
      fail(stream, 502, 'invalid target URL');
      return undefined;
    }
    const { tls } = target;
    const out: Record<string, string | string[]> = endToEndHeaders(headers);
    out.host = target.host;
    if (upgrade) Object.assign(out, { connection: 'Upgrade', upgrade: String(headers[H.upgrade] ?? '') });
    const req = (tls ? https : http).request({
      protocol: target.protocol, hostname: target.hostname, port: target.port,
      method: String(headers[':method'] ?? 'GET'), path: target.base + String(headers[':path'] ?? '/'), headers: out,
      agent: upgrade ? false : tls ? httpsAgent : httpAgent, rejectUnauthorized: !opts.skipTls, timeout: opts.targetTimeoutMs,
    });
    req.on('timeout', () => {
      fail(stream, 504, 'target timed out');
      req.destroy();
    });
    req.on('error', (err) => fail(stream, 502, targetError(err)));
    // The daemon cancelled (client gone) or the tunnel broke: drop the target exchange too.
    let complete = false;
    req.on('response', (res) => res.once('end', () => { complete = true; }));
    stream.on('close', () => { if (!complete) req.destroy(); });
    stream.on('error', () => req.destroy());
    return req;
  }

  function respond(stream: ServerHttp2Stream, res: IncomingMessage): void {
    res.socket.setTimeout(0);
    if (stream.destroyed) return void res.destroy();
    stream.respond({ ':status': res.statusCode ?? 502, ...endToEndHeaders(res.headers) });
    if (stream.writableEnded) return void res.resume(); // HEAD, 204, 304: no body allowed
    res.pipe(stream);
    res.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    res.on('aborted', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  }

  function proxyHttp(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const req = request(stream, headers, false);
    if (!req) return;
    req.on('response', (res) => respond(stream, res));
    relay(stream, req);
  }

  function proxyUpgrade(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const req = request(stream, headers, true);
    if (!req) return;
    req.on('response', (res) => respond(stream, res));
    req.on('upgrade', (res, socket, head) => {
      socket.setTimeout(0);
      socket.setNoDelay(true);
      stream.respond({ ':status': 200, [H.status]: '101', [H.upgrade]: String(res.headers.upgrade ?? ''), ...endToEndHeaders(res.headers) });
      if (head.length) stream.write(head);
      socket.pipe(stream);
      relay(stream, socket);
      socket.on('error', () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.on('close', () => socket.destroy());
    });
    req.end();
  }

  function proxyTcp(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(String(headers[H.target] ?? ''));
    if (!m) return fail(stream, 502, 'invalid TCP target');
    const socket = net.connect({ host: m[1], port: Number(m[2]), allowHalfOpen: true, noDelay: true, timeout: opts.targetTimeoutMs });
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.setTimeout(0);
      stream.respond({ ':status': 200 });
      socket.pipe(stream);
      relay(stream, socket);
    });
    socket.on('timeout', () => {
      fail(stream, 504, 'target timed out');
      socket.destroy();
    });
    socket.on('error', (err) => {
      if (connected) stream.close(http2.constants.NGHTTP2_CANCEL);
      else fail(stream, 502, targetError(err));
    });
    stream.on('close', () => socket.destroy());
    stream.on('error', () => socket.destroy());
  }

  return (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void => {
    stream.on('error', () => {});
    const kind = headers[H.kind];
    if (kind === 'http') proxyHttp(stream, headers);
    else if (kind === 'upgrade') proxyUpgrade(stream, headers);
    else if (kind === 'tcp') proxyTcp(stream, headers);
    else fail(stream, 400, `unknown stream kind ${String(kind)}`);
  };
}
