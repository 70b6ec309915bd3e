import { inBlocks, parseIp } from '../util/cidr.ts';
import type { LiveRoute } from './route-table.ts';

/**
 * What a route's access control (docs/API.md#routes) would do to a request from `clientIp`, for
 * `monctl routes test`: the refusal when the address rules refuse it, and notes on the checks that
 * depend on more than the address (credentials, rate, plain HTTP). Nothing is counted: the rate
 * limiter is not asked.
 */
export function explainAccess(route: LiveRoute, clientIp: string | null): { refused: string | null; notes: string[] } {
  const access = route.access;
  if (access.open) return { refused: null, notes: [] };
  const notes: string[] = [];
  let refused: string | null = null;
  if (access.httpsRedirect) notes.push('plain-HTTP requests get a 308 to HTTPS (httpsRedirect)');
  if (access.allow.length || access.deny.length) {
    const ip = clientIp === null ? undefined : parseIp(clientIp);
    if (clientIp === null) notes.push('the route has ipAllow/ipDeny rules: give a clientIp to test them');
    else if (!ip) refused = `access: client address ${clientIp} is not an IP address (403)`;
    else if (inBlocks(ip, access.deny)) refused = `access: client ${clientIp} is in ipDeny (403)`;
    else if (access.allow.length && !inBlocks(ip, access.allow)) refused = `access: client ${clientIp} is not in ipAllow (403)`;
    else notes.push(`access: client ${clientIp} passes ipAllow/ipDeny`);
  }
  if (access.rate) notes.push(`access: at most ${access.rate.perSecond} requests/s per client (burst ${access.rate.burst})`);
  if (access.auth === 'basic') notes.push('access: basic auth is required (401 without valid credentials)');
  if (access.auth === 'apiKey') notes.push('access: a route key is required (401 without one)');
  if (access.auth === 'oidc')
    notes.push(
      "access: sign-in through the OpenID provider is required (browsers are redirected, others get 401; /.monctl/sso/ is the edge's)",
    );
  return { refused, notes };
}
