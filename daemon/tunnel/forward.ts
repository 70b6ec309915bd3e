import http2, { type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import { endToEndHeaders, H, type StreamKind } from '../../src/tunnel/protocol.ts';
import type { ExchangeInfo } from './observe.ts';
import type { LiveRoute } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';

/** The client's address as the edge saw it (IPv4-mapped IPv6 shown as IPv4). */
export function clientIp(req: IncomingMessage): string | null {
  const ip = req.socket.remoteAddress;
  return ip ? ip.replace(/^::ffff:/, '') : null;
}

export function exchangeInfo(req: IncomingMessage): ExchangeInfo {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return { method: req.method ?? 'GET', path: (q >= 0 ? url.slice(0, q) : url).slice(0, 2048), clientIp: clientIp(req) };
}

/**
 * The h2 request headers that carry one edge request to the agent: the
 * client's end-to-end headers, the X-Forwarded-* trio, and what to do.
 */
export function tunnelHeaders(req: IncomingMessage, route: LiveRoute, kind: StreamKind): OutgoingHttpHeaders {
  const ip = clientIp(req) ?? '';
  const prior = req.headers['x-forwarded-for'];
  const host = req.headers.host ?? route.hostname;
  return {
    ...endToEndHeaders(req.headers),
    ':method': req.method ?? 'GET',
    ':path': req.url || '/',
    ':authority': host,
    'x-forwarded-for': prior ? `${prior}, ${ip}` : ip,
    'x-forwarded-proto': 'http',
    'x-forwarded-host': host,
    [H.kind]: kind,
    [H.target]: route.target,
  };
}

/** Why an agent stream could not be opened, or undefined with the stream. */
export function openStream(
  sessions: AgentSessions, agentId: number, headers: OutgoingHttpHeaders, endStream: boolean,
): { stream?: ClientHttp2Stream; error?: string } {
  const session = sessions.get(agentId);
  if (!session) return { error: 'agent not connected' };
  try {
    return { stream: session.request(headers, { endStream }) };
  } catch (err) {
    return { error: `tunnel: ${(err as Error).message}` };
  }
}

/** Cancels a stream whose client went away, so the agent drops the target request too. */
export function cancel(stream: ClientHttp2Stream): void {
  if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
}

/** Status and error of a response the agent made itself because the target failed (502, 504). */
export function agentError(headers: http2.IncomingHttpHeaders): string | undefined {
  const value = headers[H.error];
  return typeof value === 'string' ? value : undefined;
}
