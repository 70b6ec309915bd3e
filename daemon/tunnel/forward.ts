import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { endToEndHeaders, type StreamTarget } from '../../src/tunnel/protocol.ts';
import { edgeClientIp, peerTrusted } from '../http/client-ip.ts';
import type { ExchangeInfo } from './observe.ts';
import type { LiveRoute } from './route-table.ts';
import { applyRequestRules } from './rules.ts';

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
        host: url.host,
        base: url.pathname.replace(/\/+$/, ''),
        stream: {
          host: hostname,
          port: Number(url.port || (tls ? 443 : 80)),
          tls,
          servername: tls && !isIP(hostname) ? hostname : undefined,
        },
      };
    }
  } catch {
    /* invalid: undefined */
  }
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

/** An RFC 7239 parameter value: a token as it is, anything else as a quoted-string. */
function forwardedValue(value: string): string {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) ? value : `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** RFC 7239's `for=` node: an IPv4 address as it is, an IPv6 one bracketed and quoted, `unknown` without one. */
function forwardedFor(ip: string | null): string {
  if (!ip) return 'unknown';
  return ip.includes(':') ? `"[${ip}]"` : ip;
}

/**
 * The request headers the target gets: the client's end-to-end headers, the Host of the route's rules
 * (the target URL's own by default), X-Forwarded-*, Forwarded and X-Real-IP, then the route's request
 * rules (the operator's word, applied last: they may set or remove even those).
 * `requestHost`: the host the request was for (an absolute-form authority wins over Host).
 * What a peer sends in X-Forwarded-For/Proto/Host and Forwarded counts only when the peer is one of
 * `--trusted-proxies`: theirs is kept (X-Forwarded-For and Forwarded extended with this hop), anyone
 * else's is replaced, since a client that writes them itself would otherwise name any client, scheme
 * or host to a target that believes them. X-Real-IP is the client the edge decided on (the peer, or
 * behind a trusted proxy the forwarded client), never the client's own.
 */
export function forwardHeaders(
  req: IncomingMessage,
  route: LiveRoute,
  target: HttpTarget,
  requestHost: string | undefined,
): OutgoingHttpHeaders {
  const peer = clientIp(req);
  const ip = peer ?? '';
  const trusted = peerTrusted(req);
  const sent = req.headers;
  const host = requestHost ?? route.hostname;
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const rules = route.rules;
  const headers: OutgoingHttpHeaders = endToEndHeaders(sent);
  headers.host = rules.hostHeader ?? (rules.preserveHost ? host : target.host);
  const element = `for=${forwardedFor(peer)};proto=${proto};host=${forwardedValue(host)}`;
  if (trusted) {
    headers['x-forwarded-for'] = sent['x-forwarded-for'] ? `${sent['x-forwarded-for']}, ${ip}` : ip;
    headers['x-forwarded-proto'] = sent['x-forwarded-proto'] || proto;
    headers['x-forwarded-host'] = sent['x-forwarded-host'] || host;
    headers.forwarded = sent.forwarded ? `${sent.forwarded}, ${element}` : element;
  } else {
    headers['x-forwarded-for'] = ip;
    headers['x-forwarded-proto'] = proto;
    headers['x-forwarded-host'] = host;
    headers.forwarded = element;
  }
  headers['x-real-ip'] = edgeClientIp(req) ?? ip;
  return rules.request === null ? headers : applyRequestRules(rules.request, headers);
}

/** Problem type and status for a failed exchange with the target (the agent's reset code says why). */
export function targetFailure(err: NodeJS.ErrnoException): { status: number; code: string; detail: string } {
  if (err.code === 'ETIMEDOUT') return { status: 504, code: 'target-timeout', detail: 'target timed out' };
  if (err.code?.startsWith('ERR_TUNNEL_')) {
    return { status: 502, code: 'agent-unavailable', detail: err.message };
  }
  return { status: 502, code: 'target-unavailable', detail: err.message };
}
