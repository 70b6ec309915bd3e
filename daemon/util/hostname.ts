import { isIP } from 'node:net';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A DNS name or an IP address, lower-cased, without a trailing dot; undefined when neither. */
export function normaliseHostname(text: string): string | undefined {
  const host = text.trim().toLowerCase().replace(/\.$/, '');
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) return bare;
  if (host.length === 0 || host.length > 253) return undefined;
  return host.split('.').every((label) => LABEL.test(label)) ? host : undefined;
}

/**
 * A route's hostname: a name as above, or a wildcard `*.` followed by a DNS name of at least two
 * labels (docs/API.md#wildcard-hostnames); lower-cased. Undefined when neither.
 */
export function normaliseRouteHostname(text: string): string | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!trimmed.startsWith('*.')) return normaliseHostname(trimmed);
  const rest = normaliseHostname(trimmed.slice(2));
  return rest && !isIP(rest) && rest.includes('.') ? `*.${rest}` : undefined;
}

/** Whether a route hostname (exact or `*.suffix`) covers a lower-cased host: one label or more before the suffix. */
export function routeHostnameCovers(pattern: string, host: string): boolean {
  if (!pattern.startsWith('*.')) return pattern === host;
  return host.length > pattern.length - 1 && host.endsWith(pattern.slice(1));
}
