import type { Command } from 'commander';
import type { RateLimit, Route, RouteAuth, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { readSecret } from '../io/prompt.ts';
import { type SsoFlags, ssoBody, wantsSso, withSsoFlags } from './route-sso-flags.ts';

/** The access-control flags of `routes add|update` (docs/API.md#routes). */
export interface AccessFlags extends SsoFlags {
  auth?: string;
  basicAuth?: string;
  ipAllow?: string;
  ipDeny?: string;
  rateLimit?: string;
  httpsRedirect?: boolean;
}

const AUTHS: Record<string, RouteAuth> = { none: 'none', basic: 'basic', apikey: 'apiKey', oidc: 'oidc' };

export function withAccessFlags(cmd: Command): Command {
  return withSsoFlags(cmd)
    .option(
      '--auth <auth>',
      "HTTP: none, basic, apiKey (a route key: monctl keys create NAME --route ROUTE) or oidc (sign-in through the daemon's --oidc-issuer, by the --sso-* rules)",
    )
    .option('--basic-auth <user>', 'HTTP: require basic auth, adding or changing USER; the password is prompted, or read from stdin')
    .option('--ip-allow <cidrs>', 'HTTP and TCP: only these client addresses or CIDR blocks, comma-separated ("" for all)')
    .option('--ip-deny <cidrs>', 'HTTP and TCP: refuse these client addresses or CIDR blocks, comma-separated ("" for none)')
    .option(
      '--rate-limit <rate[:burst]>',
      'HTTP and TCP: requests (TCP: new connections) per second per client IP, and the burst (default: the rate, at least 1); "off" for none',
    )
    .option('--https-redirect', "HTTP: send plain-HTTP clients to HTTPS with a 308 (needs the daemon's --edge-tls-listen)")
    .option('--no-https-redirect', 'HTTP: serve plain HTTP again');
}

/** Whether the flags ask for something only HTTP routes have (so `routes update` must know the route's type first). */
export const wantsHttpOnly = (f: AccessFlags) =>
  f.basicAuth !== undefined || f.httpsRedirect === true || wantsSso(f) || (f.auth !== undefined && f.auth.toLowerCase() !== 'none');

/** A usage error (exit 2) for HTTP-only flags on a TCP route, before any password prompt. */
export function checkHttpOnly(f: AccessFlags, type: string | undefined): void {
  if (type?.toUpperCase() !== 'TCP') return;
  const flag =
    f.basicAuth !== undefined
      ? '--basic-auth'
      : f.httpsRedirect === true
        ? '--https-redirect'
        : f.auth !== undefined && f.auth.toLowerCase() !== 'none'
          ? '--auth'
          : wantsSso(f)
            ? '--sso-*'
            : undefined;
  if (flag)
    throw new MonctlError(
      'usage',
      `${flag} is for HTTP routes only: a TCP route takes --ip-allow, --ip-deny and --rate-limit`,
      ExitCode.usage,
    );
}

const cidrs = (text: string) =>
  text
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);

/** `5`, `0.5`, `10:20`, or `off`. */
export function parseRateLimit(text: string): RateLimit | null {
  if (text.trim().toLowerCase() === 'off') return null;
  const m = /^\s*(\d+(?:\.\d+)?)(?:\/s)?(?::(\d+))?\s*$/.exec(text);
  const perSecond = m ? Number(m[1]) : NaN;
  if (!m || !(perSecond > 0))
    throw new MonctlError(
      'usage',
      `--rate-limit must be RATE[:BURST] (requests per second, e.g. 10:20) or off, not "${text}"`,
      ExitCode.usage,
    );
  return { perSecond, burst: m[2] ? Number(m[2]) : Math.max(1, Math.ceil(perSecond)) };
}

/**
 * The access-control fields of a route body. `--basic-auth USER` keeps the
 * route's other users (`current`, on update) with their stored passwords.
 */
export async function accessBody(f: AccessFlags, current?: Route): Promise<RouteUpdate> {
  const body: RouteUpdate = {};
  if (f.auth !== undefined) {
    const auth = AUTHS[f.auth.toLowerCase()];
    if (!auth) throw new MonctlError('usage', `--auth must be none, basic, apiKey or oidc, not "${f.auth}"`, ExitCode.usage);
    body.auth = auth;
  }
  if (f.basicAuth !== undefined) {
    if (f.auth !== undefined && body.auth !== 'basic')
      throw new MonctlError('usage', '--basic-auth needs --auth basic (or no --auth)', ExitCode.usage);
    const password = await readSecret(`Password for ${f.basicAuth}`, { confirm: true });
    const others = (current?.basicUsers ?? []).filter((u) => u !== f.basicAuth).map((username) => ({ username }));
    body.auth = 'basic';
    body.basicUsers = [...others, { username: f.basicAuth, password }];
  }
  if (f.ipAllow !== undefined) body.ipAllow = cidrs(f.ipAllow);
  if (f.ipDeny !== undefined) body.ipDeny = cidrs(f.ipDeny);
  if (f.rateLimit !== undefined) body.rateLimit = parseRateLimit(f.rateLimit);
  if (f.httpsRedirect !== undefined) body.httpsRedirect = f.httpsRedirect;
  const sso = ssoBody(f);
  if (sso) body.sso = sso;
  return body;
}

/** `basic (alice,bob)`, `apiKey`, `-`. */
export const authCell = (r: Route) => (r.type !== 'HTTP' ? '-' : r.auth === 'basic' ? `basic (${r.basicUsers.join(',')})` : r.auth);
export const rateCell = (r: Route) => (r.rateLimit ? `${r.rateLimit.perSecond}/s burst ${r.rateLimit.burst}` : '-');
export const certCell = (r: Route) =>
  r.certificate
    ? `${r.certificate.state}${r.certificate.source ? ` ${r.certificate.source}` : ''}${r.certificate.notAfter ? ` until ${r.certificate.notAfter}` : ''}${r.certificate.lastError ? ` (${r.certificate.lastError})` : ''}`
    : '-';
