import { parseImageReference, parseNamespace } from '../../src/probes/docker/reference.ts';
import type { DnsOptions } from '../../src/probes/types.ts';
import type { ProbeInput } from './types.ts';

/**
 * The host a check talks to, for the per-host concurrency cap (`--probe-per-host`): a URL's
 * `host:port`, a `host:port` target as written, a PING target's address, a DNS check's resolver
 * (the name is what it asks about, not whom), a registry's endpoint. Every type must have its own
 * rule: read as an image reference, 10,000 PING or DNS targets all became one registry host, and
 * 32 checks at a time could not keep their schedule.
 */
export function hostKey(input: Pick<ProbeInput, 'type' | 'target' | 'recursive' | 'options'>): string {
  try {
    switch (input.type) {
      case 'HTTP':
      case 'WEBSOCKET':
        return new URL(input.target).host;
      case 'DOCKER':
        return input.recursive ? parseNamespace(input.target).endpoint : parseImageReference(input.target).endpoint;
      case 'DNS':
        return `dns:${(input.options as DnsOptions | undefined)?.resolver?.toLowerCase() ?? 'system'}`;
      default:
        // TCP, TLS, UDP, GRPC, SSH (`host:port`) and PING (a host).
        return input.target.toLowerCase();
    }
  } catch {
    return input.target;
  }
}
