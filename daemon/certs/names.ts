import { isIP } from 'node:net';
import { normaliseHostname } from '../util/hostname.ts';

/** A DNS name or a wildcard `*.example.com` (one leftmost label), lower-cased; undefined when neither. */
export function normaliseCertName(text: string): string | undefined {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  if (name.startsWith('*.')) {
    const rest = normaliseHostname(name.slice(2));
    return rest && !isIP(rest) && rest.includes('.') ? `*.${rest}` : undefined;
  }
  const host = normaliseHostname(name);
  return host && !isIP(host) ? host : undefined;
}

/** Whether a certificate name covers a hostname (RFC 6125: a wildcard matches exactly one leftmost label). */
export function covers(pattern: string, name: string): boolean {
  if (pattern === name) return true;
  if (!pattern.startsWith('*.')) return false;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot + 1) === pattern.slice(2) && !name.startsWith('*.');
}

/** The wildcard that would cover a name: `a.example.com` to `*.example.com`. */
export function wildcardOf(name: string): string | undefined {
  const dot = name.indexOf('.');
  return dot > 0 && name.indexOf('.', dot + 1) > 0 ? `*.${name.slice(dot + 1)}` : undefined;
}
