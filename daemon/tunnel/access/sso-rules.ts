import type { IncomingMessage } from 'node:http';
import type { RouteSso } from '../../../src/api/schemas/tunnel.ts';
import { ANY_ACCOUNT, normaliseDomain, normaliseEmailRule } from '../../tunnel-admin/route-sso.ts';
import type { RouteSession } from './sso-session.ts';

type Who = Pick<RouteSession, 'email' | 'emailVerified' | 'groups'>;

/**
 * Why the route's rules refuse someone, or undefined when one rule admits them: `*` in
 * domains; one of the groups; a verified email listed, or whose domain is listed (an
 * unverified email proves nothing, so it matches neither).
 */
export function ruleRefusal(rules: RouteSso, who: Who): string | undefined {
  if (rules.domains.includes(ANY_ACCOUNT)) return undefined;
  if (who.groups.some((g) => rules.groups.includes(g))) return undefined;
  const email = who.email ? normaliseEmailRule(who.email) : undefined;
  const domain = email ? normaliseDomain(email.slice(email.lastIndexOf('@') + 1)) : undefined;
  if (email && who.emailVerified) {
    if (rules.emails.includes(email)) return undefined;
    if (domain && rules.domains.includes(domain)) return undefined;
  }
  const why: string[] = [];
  if (rules.emails.length || rules.domains.length) {
    if (!email) why.push('the account has no usable email');
    else if (!who.emailVerified) why.push(`the provider has not verified ${email}`);
    else {
      if (rules.emails.length) why.push(`${email} is not an allowed email`);
      if (rules.domains.length) why.push(`its domain ${domain ?? '(none)'} is not allowed`);
    }
  }
  if (rules.groups.length) why.push('none of its groups is allowed');
  return `this account may not use the route: ${why.join('; ')}`;
}

const IDENTITY_HEADER = /^x-auth-request-/i;
/** A header value as the target can take it: printable ASCII as is, anything else percent-encoded. */
const safe = (v: string) => (/^[\x20-\x7e]*$/.test(v) ? v : encodeURIComponent(v));

/**
 * Tells the target who signed in, with oauth2-proxy's header names, after removing every
 * `X-Auth-Request-*` the client sent: the target can trust them because only the edge sets them.
 */
export function setIdentityHeaders(req: IncomingMessage, session: RouteSession): void {
  dropIdentityHeaders(req);
  req.headers['x-auth-request-user'] = safe(session.subject);
  if (session.email) req.headers['x-auth-request-email'] = safe(session.email);
  const preferred = session.username ?? session.email;
  if (preferred) req.headers['x-auth-request-preferred-username'] = safe(preferred);
  if (session.groups.length) req.headers['x-auth-request-groups'] = session.groups.map((g) => encodeURIComponent(g)).join(',');
}

/** Removes the identity headers a client sent (any route with sign-in, refused requests too). */
export function dropIdentityHeaders(req: IncomingMessage): void {
  for (const name of Object.keys(req.headers)) if (IDENTITY_HEADER.test(name)) delete req.headers[name];
}
