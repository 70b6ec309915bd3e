import type { RateLimit, RouteAuth, RouteCreate, RouteSso, RouteType, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { invalidField } from '../../src/errors.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { RouteRow } from '../store/schema.ts';
import { normaliseCidr } from '../util/cidr.ts';
import { hasRules, ssoDraft, ssoOf } from './route-sso.ts';

/** A route's access control as stored: enforced by the edge, daemon/tunnel/access/. */
export interface AccessDraft {
  auth: RouteAuth;
  basicUsers: StoredUser[];
  ipAllow: string[];
  ipDeny: string[];
  rateLimit: RateLimit | null;
  httpsRedirect: boolean;
  /** The sign-in rules of `auth: oidc` (route-sso.ts); kept while another auth is chosen, shown only with oidc. */
  sso: RouteSso | null;
}

export interface StoredUser {
  username: string;
  hash: string;
}

export const NO_ACCESS_RULES: AccessDraft = {
  auth: 'none',
  basicUsers: [],
  ipAllow: [],
  ipDeny: [],
  rateLimit: null,
  httpsRedirect: false,
  sso: null,
};

const parseList = <T>(text: string | null): T[] => (text ? (JSON.parse(text) as T[]) : []);

/** The stored access control of a row. */
export function accessOf(row: RouteRow): AccessDraft {
  return {
    auth: (row.auth ?? 'none') as RouteAuth,
    basicUsers: parseList<StoredUser>(row.basic_users),
    ipAllow: parseList<string>(row.ip_allow),
    ipDeny: parseList<string>(row.ip_deny),
    rateLimit: row.rate_per_second === null ? null : { perSecond: Number(row.rate_per_second), burst: Number(row.rate_burst ?? 1) },
    httpsRedirect: Boolean(row.https_redirect),
    sso: ssoOf(row.sso_rules),
  };
}

function cidrs(field: 'ipAllow' | 'ipDeny', list: string[]): string[] {
  return [
    ...new Set(
      list.map((text, i) => {
        const block = normaliseCidr(text);
        if (!block) throw invalidField(`${field}[${i}]`, `"${text}" is not an IP address or CIDR block`);
        return block;
      }),
    ),
  ];
}

async function users(given: NonNullable<RouteUpdate['basicUsers']>, stored: StoredUser[]): Promise<StoredUser[]> {
  const seen = new Set<string>();
  const out: StoredUser[] = [];
  for (const [i, user] of given.entries()) {
    if (seen.has(user.username)) throw invalidField(`basicUsers[${i}]`, `user ${user.username} is listed twice`);
    seen.add(user.username);
    const kept = stored.find((s) => s.username === user.username);
    if (user.password === undefined && !kept) throw invalidField(`basicUsers[${i}]`, `user ${user.username} is new: give a password`);
    out.push({ username: user.username, hash: user.password === undefined ? kept!.hash : await hashPassword(user.password) });
  }
  return out;
}

/**
 * The access control a create or update asks for, merged with the stored one
 * (fields left out are kept; a change of type starts from none). TCP routes
 * take the client-address rules only (ipAllow, ipDeny, rateLimit: new
 * connections per second): raw TCP has no credentials or scheme to check, so
 * auth other than none, basicUsers, httpsRedirect and sso are refused with 400. `auth: oidc`
 * needs a rule (route-sso.ts) and a daemon with `--oidc-issuer` (`ssoAvailable`).
 */
export async function accessDraft(
  type: RouteType,
  body: RouteCreate | RouteUpdate,
  row: RouteRow | null,
  ssoAvailable = false,
): Promise<AccessDraft> {
  if (type === 'TCP') rejectHttpOnly(body);
  const stored = row && row.type === type ? accessOf(row) : NO_ACCESS_RULES;
  const draft: AccessDraft = {
    auth: body.auth ?? stored.auth,
    basicUsers: body.basicUsers ? await users(body.basicUsers, stored.basicUsers) : stored.basicUsers,
    ipAllow: body.ipAllow ? cidrs('ipAllow', body.ipAllow) : stored.ipAllow,
    ipDeny: body.ipDeny ? cidrs('ipDeny', body.ipDeny) : stored.ipDeny,
    rateLimit: body.rateLimit !== undefined ? body.rateLimit : stored.rateLimit,
    httpsRedirect: body.httpsRedirect ?? stored.httpsRedirect,
    sso: ssoDraft(body.sso, stored.sso),
  };
  if (draft.auth === 'basic' && draft.basicUsers.length === 0) throw invalidField('basicUsers', 'basic auth needs at least one user');
  if (draft.auth === 'oidc') {
    if (!ssoAvailable) throw invalidField('auth', 'oidc needs single sign-on on the daemon (--oidc-issuer and --oidc-client-id)');
    if (!hasRules(draft.sso))
      throw invalidField('sso', 'auth oidc needs at least one rule: emails, domains or groups (domains ["*"] admits every account)');
  }
  return draft;
}

/** The HTTP-only fields on a TCP route: their neutral values (auth none, no users, no redirect) pass, as a route's own detail sent back does. */
function rejectHttpOnly(body: RouteCreate | RouteUpdate): void {
  if (body.auth !== undefined && body.auth !== 'none')
    throw invalidField('auth', 'only HTTP routes have auth (TCP routes take ipAllow, ipDeny and rateLimit)');
  if (body.basicUsers?.length) throw invalidField('basicUsers', 'only HTTP routes have basic auth users');
  if (body.httpsRedirect) throw invalidField('httpsRedirect', 'only HTTP routes can redirect to HTTPS');
  if (body.sso) throw invalidField('sso', 'only HTTP routes have sign-in rules');
}

export function accessColumns(d: AccessDraft) {
  const list = (items: unknown[]) => (items.length ? JSON.stringify(items) : null);
  return {
    auth: d.auth,
    basic_users: list(d.basicUsers),
    ip_allow: list(d.ipAllow),
    ip_deny: list(d.ipDeny),
    rate_per_second: d.rateLimit?.perSecond ?? null,
    rate_burst: d.rateLimit?.burst ?? null,
    https_redirect: d.httpsRedirect ? 1 : 0,
    sso_rules: d.sso ? JSON.stringify(d.sso) : null,
  };
}
