import type { RouteAuth, RouteSso } from '../../../src/api/schemas/tunnel.ts';
import type { RouteRow } from '../../store/schema.ts';
import { accessOf } from '../../tunnel-admin/route-access.ts';
import { type Block, parseCidr } from '../../util/cidr.ts';

/** A route's access control, ready for the edge: parsed once per route reload. */
export interface RouteAccess {
  /** Nothing to check: the edge goes straight on (most routes). */
  open: boolean;
  auth: RouteAuth;
  /** Basic auth: username to scrypt hash. */
  users: ReadonlyMap<string, string>;
  allow: readonly Block[];
  deny: readonly Block[];
  rate: { perSecond: number; burst: number } | null;
  httpsRedirect: boolean;
  /** `auth: oidc`: the sign-in rules, read on every request (sso-gate.ts). */
  sso: RouteSso | null;
}

export const OPEN_ACCESS: RouteAccess = {
  open: true,
  auth: 'none',
  users: new Map(),
  allow: [],
  deny: [],
  rate: null,
  httpsRedirect: false,
  sso: null,
};

const blocks = (list: string[]) => list.map((c) => parseCidr(c)).filter((b): b is Block => b !== undefined);

export function compileAccess(row: RouteRow): RouteAccess {
  const a = accessOf(row);
  const open = a.auth === 'none' && a.ipAllow.length === 0 && a.ipDeny.length === 0 && a.rateLimit === null && !a.httpsRedirect;
  if (open) return OPEN_ACCESS;
  return {
    open,
    auth: a.auth,
    users: new Map(a.basicUsers.map((u) => [u.username, u.hash])),
    allow: blocks(a.ipAllow),
    deny: blocks(a.ipDeny),
    rate: a.rateLimit,
    httpsRedirect: a.httpsRedirect,
    sso: a.auth === 'oidc' ? a.sso : null,
  };
}
