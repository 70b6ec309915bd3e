import type { IncomingMessage } from 'node:http';
import type { SecretBox } from '../../auth/secret-box.ts';
import { cookieJar } from '../../http/cookies.ts';
import { overTls } from '../../http/https-redirect.ts';

/** Who signed in at a route's hostname: what the target is told, sealed in the cookie. */
export interface RouteSession {
  /** The host the cookie was issued for (no port): a cookie replayed on another host is refused. */
  host: string;
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  username: string | null;
  groups: string[];
  /** Epoch ms: when it was signed in (the route's current sessionTtl counts from here) and when it ends. */
  issuedAt: number;
  expiresAt: number;
}

const NAME = 'monctl_route_sso';
/** Browsers keep 4096 bytes per cookie: the sealed session stays under it, whatever the groups. */
export const MAX_COOKIE_VALUE = 3800;

/** `__Host-` on the HTTPS edge: the browser then insists on Secure, Path=/ and no Domain. */
export const sessionCookieName = (req: IncomingMessage) => (overTls(req) ? `__Host-${NAME}` : NAME);

/** Host-only (no Domain), the whole host (Path=/), out of scripts' reach, not sent on cross-site subrequests. */
export function sessionCookie(req: IncomingMessage, value: string, maxAgeSeconds: number): string {
  const parts = [`${sessionCookieName(req)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
  if (overTls(req)) parts.push('Secure');
  return parts.join('; ');
}

export const clearSessionCookie = (req: IncomingMessage) => sessionCookie(req, '', 0);

/**
 * Seals a session, dropping groups until it fits the cookie: first those no rule of the host
 * names (`wanted`), then from the end. A session's groups are what the target is told, and what
 * the rules are re-checked against.
 */
export function sealSession(box: SecretBox, session: RouteSession, wanted: ReadonlySet<string>): string {
  let sealed = box.seal(JSON.stringify(session));
  if (sealed.length <= MAX_COOKIE_VALUE) return sealed;
  const groups = session.groups.filter((g) => wanted.has(g));
  for (;;) {
    sealed = box.seal(JSON.stringify({ ...session, groups }));
    if (sealed.length <= MAX_COOKIE_VALUE || groups.length === 0) return sealed;
    groups.pop();
  }
}

/** The session of a request, if its cookie opens (ours, untampered), is for `host` and `issuer`, and is unexpired. */
export function openSession(box: SecretBox, req: IncomingMessage, host: string, issuer: string, now: number): RouteSession | undefined {
  const value = cookieJar(req).get(sessionCookieName(req));
  if (!value || value.length > MAX_COOKIE_VALUE) return undefined;
  const opened = box.open(value);
  if (!opened) return undefined;
  const session = JSON.parse(opened) as RouteSession;
  if (session.host !== host || session.issuer !== issuer || !(session.expiresAt > now)) return undefined;
  return session;
}

/** The Cookie header the target gets: without the edge's own cookies (the session, sign-ins under way). */
export function stripEdgeCookies(req: IncomingMessage): void {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return;
  const kept = header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => {
      const name = p.slice(0, Math.max(0, p.indexOf('=')));
      return p !== '' && name !== NAME && name !== `__Host-${NAME}` && !name.startsWith('monctl_sso_');
    });
  if (kept.length) req.headers.cookie = kept.join('; ');
  else delete req.headers.cookie;
}
