/**
 * The tunnel protocol, shared by the daemon (edge) and `monctl agent`.
 *
 * The agent dials `GET /admin/tunnel` with an HTTP/1.1 Upgrade. After the 101
 * the socket carries HTTP/2: the daemon is the h2 CLIENT, the agent the h2
 * SERVER. Every forwarded exchange is one h2 stream whose request headers say
 * what to do (`x-monctl-kind`) and where (`x-monctl-target`). HTTP/2 gives the
 * multiplexing, per-stream and per-connection flow control and pings.
 */

export const TUNNEL_PATH = '/admin/tunnel';
export const TUNNEL_UPGRADE = 'monctl-tunnel';
export const AGENT_VERSION_HEADER = 'x-monctl-agent-version';

/** Per-stream window (h2 SETTINGS_INITIAL_WINDOW_SIZE), far above the 64 KiB default. */
export const STREAM_WINDOW = 1 * 1024 * 1024;
/** Largest DATA frame each side accepts: fewer, larger frames cost less per byte than the 16 KiB default. */
export const MAX_FRAME_SIZE = 256 * 1024;
/** Connection-level receive window of each side. */
export const SESSION_WINDOW = 8 * 1024 * 1024;
/** Outstanding buffered data allowed per h2 session before nghttp2 refuses new streams (MB). */
export const SESSION_MAX_MEMORY_MB = 256;
/** Keepalive: a ping every PING_INTERVAL_MS; no answer within PING_TIMEOUT_MS means the peer is dead. */
export const PING_INTERVAL_MS = 3_000;
export const PING_TIMEOUT_MS = 4_000;

/** Request headers of a tunnel stream (lowercase, as h2 requires). */
export const H = {
  kind: 'x-monctl-kind',
  target: 'x-monctl-target',
  /** The client's `Upgrade` value for an upgrade stream (h2 forbids the header itself). */
  upgrade: 'x-monctl-upgrade',
  /** The target's real status where h2 cannot carry it (101). */
  status: 'x-monctl-status',
  /** Set by the agent on a response it made itself because the target failed. */
  error: 'x-monctl-error',
} as const;

export type StreamKind = 'http' | 'upgrade' | 'tcp';

/** Reasons the daemon gives in GOAWAY opaque data; the agent decides whether to dial again. */
export const GOAWAY_REPLACED = 'replaced';

/**
 * Hop-by-hop headers (RFC 9110 7.6.1) plus those HTTP/2 forbids: never forwarded
 * in either direction. Headers listed in `Connection` are dropped too.
 */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings', 'host',
]);

export type HeaderMap = Record<string, string | string[] | undefined>;

/** Copies end-to-end headers only: no hop-by-hop, no h2 pseudo-headers, no tunnel headers. */
export function endToEndHeaders(headers: HeaderMap): Record<string, string | string[]> {
  // Hot path (twice per request on each side): no allocation beyond the result in the common case.
  const connection = headers.connection;
  const listed = connection
    ? new Set(String(connection).toLowerCase().split(',').map((s) => s.trim()).filter(Boolean))
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

/** The part of an h2 stream `relay` needs: `rstCode` is set before 'end' when the stream was reset. */
interface ResettableReadable extends NodeJS.ReadableStream {
  readonly rstCode?: number;
}

/**
 * Pipes an h2 stream into `to` (backpressure kept) and ends `to` only when the
 * peer ended the stream cleanly. Node ends an h2 stream's readable side on a
 * reset or a dead session too; passing that on as a clean end would turn a
 * truncated body into a complete-looking one, so `to` is destroyed instead.
 */
export function relay(from: ResettableReadable, to: NodeJS.WritableStream & { destroy(): void }): void {
  // h2 hands data over in DATA-frame pieces (about 16 KiB), one callback each. The pieces that arrive
  // in one I/O phase are written as one buffer: a quarter of the syscalls for bulk transfers.
  let pending: Buffer[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const data = pending.length === 1 ? pending[0] : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    if (!to.write(data)) from.pause();
  };
  from.on('data', (chunk: Buffer) => {
    pending.push(chunk);
    size += chunk.length;
    if (size >= 256 * 1024) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  to.on('drain', () => from.resume());
  from.once('end', () => {
    flush();
    if (!from.rstCode) to.end();
    else to.destroy();
  });
}
