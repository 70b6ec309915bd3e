/**
 * The tunnel protocol, shared by the daemon (edge) and `monctl agent`.
 *
 * The agent dials `GET /admin/tunnel` with an HTTP/1.1 Upgrade. After the 101
 * the socket carries the monctl multiplexer (src/tunnel/mux): the daemon opens
 * streams, each naming a target `host:port` (TLS or not) on the agent's side;
 * the agent connects there and pipes bytes both ways. HTTP is spoken by the
 * daemon end to end over such streams (kept alive and pooled per target), so
 * the agent parses nothing and moves bytes only. The multiplexer gives
 * per-stream and per-connection flow control, half-close, resets and pings.
 */

import { FIXED_WINDOW, STREAM_WINDOW, type StreamWindows } from './mux/windows.ts';

export const TUNNEL_PATH = '/admin/tunnel';
export const TUNNEL_UPGRADE = 'monctl-tunnel';
export const AGENT_VERSION_HEADER = 'x-monctl-agent-version';
/** The agent's `--target-timeout` in ms, sent on its dial: the daemon applies it to response headers. */
export const TARGET_TIMEOUT_HEADER = 'x-monctl-target-timeout-ms';
/**
 * Window growth (docs/DECISIONS.md#tunnel-data-plane). The agent's dial says it grows stream windows (`1`); the daemon's 101
 * then names, in STREAM_WINDOW_HEADER, the initial window (bytes) of every stream's DATA towards
 * the daemon, which the daemon grows up to STREAM_WINDOW for streams whose readers keep up. An
 * agent that does not announce, or a daemon that does not answer, keeps the fixed 1 MiB window.
 */
export const WINDOW_GROWTH_HEADER = 'x-monctl-window-growth';
export const STREAM_WINDOW_HEADER = 'x-monctl-stream-window';
/** Smallest initial window a daemon may ask for (smaller would only cost frames). */
const MIN_INITIAL_WINDOW = 16 * 1024;

/** The agent's send window from the daemon's 101 header; throws on a value out of range. */
export function sendWindowOf(value: string | undefined): StreamWindows {
  if (value === undefined) return FIXED_WINDOW;
  const initial = /^\d{1,8}$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(initial >= MIN_INITIAL_WINDOW && initial <= STREAM_WINDOW)) {
    throw new Error(
      `daemon announced a stream window of ${JSON.stringify(value.slice(0, 40))} (not ${MIN_INITIAL_WINDOW}–${STREAM_WINDOW} bytes)`,
    );
  }
  return { initial, max: STREAM_WINDOW };
}

/**
 * Keepalive (src/tunnel/mux/keepalive.ts): a ping every PING_INTERVAL_MS; neither its answer nor any
 * other byte within PING_TIMEOUT_MS means the peer is dead. 4 s dropped live agents on a host
 * starved of CPU; peers wait longer (ngrok 15 s, gRPC 20 s, frp 90 s). A process that dies closes
 * its connection at once: the timeout is only for a host or a network that went silent.
 */
export const PING_INTERVAL_MS = 3_000;
export const PING_TIMEOUT_MS = 10_000;

/** What a stream asks the agent to connect to. */
export interface StreamTarget {
  host: string;
  port: number;
  /** TLS towards the target (an https:// route); `servername` is its SNI name. */
  tls?: boolean;
  servername?: string;
}

/** Validates a stream target received from the peer. */
export function parseStreamTarget(value: unknown): StreamTarget | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { host, port, tls, servername } = value as Record<string, unknown>;
  if (typeof host !== 'string' || !host || host.length > 255) return undefined;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  if (servername !== undefined && typeof servername !== 'string') return undefined;
  return { host, port, tls: tls === true, servername: servername as string | undefined };
}

/** Reasons the daemon gives in GOAWAY opaque data; the agent decides whether to dial again. */
export const GOAWAY_REPLACED = 'replaced';

/**
 * Hop-by-hop headers (RFC 9110 7.6.1), plus Host (set per target): never forwarded
 * in either direction. Headers listed in `Connection` are dropped too.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'host',
]);

export type HeaderMap = Record<string, string | string[] | undefined>;

/** Copies end-to-end headers only: no hop-by-hop, no pseudo-headers, no x-monctl-* headers. */
export function endToEndHeaders(headers: HeaderMap): Record<string, string | string[]> {
  // Hot path (twice per request in the daemon): no allocation beyond the result in the common case.
  const connection = headers.connection;
  const listed = connection
    ? new Set(
        String(connection)
          .toLowerCase()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
    : undefined;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const first = lower.charCodeAt(0);
    if (first === 58 /* : */ || HOP_BY_HOP.has(lower) || (first === 120 /* x */ && lower.startsWith('x-monctl-'))) continue;
    if (listed?.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}

/**
 * endToEndHeaders for a flat list of raw headers (name, value, name, value…) as received, names
 * as sent: what node:http's writeHead takes without building an object.
 */
export function endToEndRawHeaders(raw: string[]): string[] {
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length !== 10 || raw[i].toLowerCase() !== 'connection') continue;
    listed ??= new Set();
    for (const name of raw[i + 1].toLowerCase().split(',')) if (name.trim()) listed.add(name.trim());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    const first = lower.charCodeAt(0);
    if (first === 58 /* : */ || HOP_BY_HOP.has(lower) || (first === 120 /* x */ && lower.startsWith('x-monctl-'))) continue;
    if (listed?.has(lower)) continue;
    out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** The host part of a Host header, lowercased, without port (IPv6 keeps its brackets). */
export function hostWithoutPort(host: string | undefined): string {
  if (!host) return '';
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(0, end + 1) : h;
  }
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/**
 * Backoff of the agent's reconnects, between 1 s and 30 s: the ceiling doubles
 * per failed attempt (2 s, 4 s, … 30 s) and the delay is random in its upper
 * half, so agents cut off together do not all dial back at the same moment.
 */
export function backoffDelay(attempt: number, minMs = 1_000, maxMs = 30_000): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** (Math.max(0, attempt) + 1));
  return Math.max(minMs, Math.round(ceiling / 2 + Math.random() * (ceiling / 2)));
}
