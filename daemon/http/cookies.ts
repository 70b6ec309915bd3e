import type { IncomingMessage } from 'node:http';

/** A Cookie header longer than this is no browser's: it is read as no cookies at all. */
const MAX_COOKIE_HEADER = 16_384;

/** The cookies of a request by name (the first of a repeated name wins), values percent-decoded where they can be. */
export function cookieJar(req: IncomingMessage): Map<string, string> {
  const jar = new Map<string, string>();
  const header = req.headers.cookie;
  if (typeof header !== 'string' || header.length > MAX_COOKIE_HEADER) return jar;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (jar.has(name)) continue;
    const value = part.slice(eq + 1).trim();
    try {
      jar.set(name, decodeURIComponent(value));
    } catch {
      jar.set(name, value);
    }
  }
  return jar;
}

/** The value of one cookie from the request, or undefined. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  return cookieJar(req).get(name);
}

/** `secure`: the request came over TLS (--tls-cert), so the browser never sends the cookie over plain HTTP. */
export function sessionCookie(name: string, value: string, opts: { maxAgeSeconds?: number; secure?: boolean } = {}): string {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (opts.maxAgeSeconds !== undefined) parts.push(`Max-Age=${opts.maxAgeSeconds}`);
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}
