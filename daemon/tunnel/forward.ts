import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { endToEndHeaders, type StreamTarget } from '../../src/tunnel/protocol.ts';
import { edgeClientIp } from './access/client-ip.ts';
import type { ExchangeInfo } from './observe.ts';
import type { LiveRoute } from './route-table.ts';

/** An HTTP(S) route target, parsed once per target string. */
export interface HttpTarget {
  /** The Host header the target gets (its own, as a direct client would send). */
  host: string;
  /** The target URL's path without trailing slashes; the request path is appended. */
  base: string;
  stream: StreamTarget;
}

const targets = new Map<string, HttpTarget | undefined>();

export function parseHttpTarget(raw: string): HttpTarget | undefined {
  if (targets.has(raw)) return targets.get(raw);
  let parsed: HttpTarget | undefined;
  try {
    const url = new URL(raw);
    const tls = url.protocol === 'https:';
    if (tls || url.protocol === 'http:') {
      const hostname = url.hostname.replace(/^\[|\]$/g, '');
      parsed = {
        host: url.host, base: url.pathname.replace(/\/+$/, ''),
        stream: { host: hostname, port: Number(url.port || (tls ? 443 : 80)), tls, servername: tls && !isIP(hostname) ? hostname : undefined },
      };
    }
  } catch { /* invalid: undefined */ }
  if (targets.size > 1000) targets.clear();
  targets.set(raw, parsed);
  return parsed;
}

/** The client's address as the edge saw it (IPv4-mapped IPv6 shown as IPv4). */
export function clientIp(req: IncomingMessage): string | null {
  const ip = req.socket.remoteAddress;
  return ip ? ip.replace(/^::ffff:/, '') : null;
}

/** `path`: as the client sent it, without the query string. */
export function exchangeInfo(req: IncomingMessage, path: string): ExchangeInfo {
  return { method: req.method ?? 'GET', path, clientIp: edgeClientIp(req) };
}

/**
 * The request headers the target gets: the client's end-to-end headers, its own Host, X-Forwarded-*.
 * `requestHost`: the host the request was for (an absolute-form authority wins over Host).
 */
export function forwardHeaders(req: IncomingMessage, route: LiveRoute, target: HttpTarget, requestHost: string | undefined): OutgoingHttpHeaders {
  const ip = clientIp(req) ?? '';
  const prior = req.headers['x-forwarded-for'];
  const host = requestHost ?? route.hostname;
  const headers: OutgoingHttpHeaders = endToEndHeaders(req.headers);
  headers.host = target.host;
  headers['x-forwarded-for'] = prior ? `${prior}, ${ip}` : ip;
  headers['x-forwarded-proto'] = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  headers['x-forwarded-host'] = host;
  return headers;
}

/** Problem type and status for a failed exchange with the target (the agent's reset code says why). */
export function targetFailure(err: NodeJS.ErrnoException): { status: number; code: string; detail: string } {
  if (err.code === 'ETIMEDOUT') return { status: 504, code: 'target-timeout', detail: 'target timed out' };
  if (err.code?.startsWith('ERR_TUNNEL_')) {
    return { status: 502, code: 'agent-unavailable', detail: err.message };
  }
  return { status: 502, code: 'target-unavailable', detail: err.message };
}
