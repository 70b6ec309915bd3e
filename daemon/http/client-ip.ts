import type { IncomingMessage } from 'node:http';
import { type Block, inBlocks, parseCidr, parseIp } from '../util/cidr.ts';

/**
 * The client of an edge request. The peer address, unless the peer is one of
 * `--trusted-proxies`: then X-Forwarded-For is read from the right, skipping
 * trusted proxies, and the first address that is not one is the client (the
 * entries left of it are whatever the client made up). Set once at start.
 */
let trusted: Block[] = [];

export function setTrustedProxies(cidrs: readonly string[]): void {
  trusted = cidrs.map((c) => parseCidr(c)).filter((b): b is Block => b !== undefined);
}

const peerOf = (req: IncomingMessage) => (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');

/** Whether the peer is one of `--trusted-proxies` (so what it forwards about the client may be believed). */
export function peerTrusted(req: IncomingMessage): boolean {
  if (trusted.length === 0) return false;
  const peerIp = parseIp(peerOf(req));
  return peerIp !== undefined && inBlocks(peerIp, trusted);
}

export function edgeClientIp(req: IncomingMessage): string | null {
  const peer = peerOf(req);
  if (!peer) return null;
  if (!peerTrusted(req)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseIp(hops[i]);
    if (!hop) break; // garbage: stop at the last address we could trust
    client = hop.toString();
    if (!inBlocks(hop, trusted)) break;
  }
  return client;
}
