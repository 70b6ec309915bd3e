import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../../src/errors.ts';
import { hostWithoutPort } from '../../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../../context.ts';
import { httpsRedirect } from '../../http/https-redirect.ts';
import type { LiveRoute } from '../route-table.ts';
import { BasicAuth, BUSY } from './basic-auth.ts';
import { inBlocks, parseIp } from '../../util/cidr.ts';
import { edgeClientIp } from '../../http/client-ip.ts';
import { RateLimiter } from './rate-limit.ts';
import { SIGN_IN_REQUIRED, SsoGate } from './sso-gate.ts';

/** What the gate may change of a request it lets through: the query the target gets (a `?token=` removed). */
export interface Admitted {
  forward: string;
}

const refuse = (status: number, code: string, detail: string, headers?: Record<string, string>) =>
  new HttpError(status, code, `access: ${detail}`, { headers });

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Access control per route, before anything reaches the agent (docs/API.md#routes), in
 * this order: plain HTTP to a route with httpsRedirect gets a 308; then the
 * client IP (ipDeny, then ipAllow: 403); then its rate (429, so that guessing
 * passwords is rate limited too); then auth (401 without valid credentials,
 * 403 for a route key of other routes; sign-in: sso-gate.ts). The credentials it checked are
 * removed before the request goes on: the target never sees them. TCP routes
 * get the client-address part at accept (checkClient).
 */
export class EdgeGate {
  readonly #ctx: DaemonContext;
  readonly #rates = new RateLimiter();
  readonly #basic = new BasicAuth();
  readonly #sso: SsoGate;
  readonly #onRefused: (routeId: number, reason: string) => void;

  /**
   * `onRefused` counts each refusal by its code (the metrics); the HTTPS redirect is none, the
   * redirect to sign in is one. `routesOf` gives a host's routes (the sign-in callback's).
   */
  constructor(
    ctx: DaemonContext,
    onRefused: (routeId: number, reason: string) => void = () => {},
    routesOf: (host: string) => readonly LiveRoute[] = () => [],
  ) {
    this.#ctx = ctx;
    this.#onRefused = onRefused;
    this.#sso = new SsoGate(ctx, routesOf);
  }

  /** A refusal (or the redirect), else undefined; `admitted.forward` loses a consumed `?token=`. */
  async check(route: LiveRoute, req: IncomingMessage, host: string | undefined, admitted: Admitted): Promise<HttpError | undefined> {
    const refusal = await this.#check(route, req, host, admitted);
    if (refusal && (refusal.status >= 400 || refusal.code === SIGN_IN_REQUIRED)) this.#onRefused(route.id, refusal.code);
    return refusal;
  }

  /**
   * The client-address rules alone (ipDeny, ipAllow, then the rate), for a
   * connection to a TCP route: there the client is the socket's peer, and a
   * token of the rate limit is one new connection. Same limiter as HTTP.
   */
  checkClient(route: LiveRoute, client: string): HttpError | undefined {
    const refusal = this.#client(route, client);
    if (refusal) this.#onRefused(route.id, refusal.code);
    return refusal;
  }

  async #check(route: LiveRoute, req: IncomingMessage, host: string | undefined, admitted: Admitted): Promise<HttpError | undefined> {
    const access = route.access;
    if (access.httpsRedirect) {
      const redirect = httpsRedirect(this.#ctx.config, req, hostWithoutPort(host) || route.hostname, admitted.forward);
      if (redirect) return redirect;
    }
    const refusal = this.#client(route, edgeClientIp(req) ?? '');
    if (refusal) return refusal;
    if (access.auth === 'basic') return this.#basicAuth(route, req);
    if (access.auth === 'apiKey') return this.#apiKey(route, req, admitted);
    if (access.auth === 'oidc') return this.#sso.check(route, req, host, admitted.forward);
    return undefined;
  }

  #client(route: LiveRoute, client: string): HttpError | undefined {
    const access = route.access;
    if (access.allow.length || access.deny.length) {
      const ip = parseIp(client);
      if (!ip) return refuse(403, 'ip-denied', `client address ${client || '(none)'} is not an IP address`);
      if (inBlocks(ip, access.deny)) return refuse(403, 'ip-denied', `client ${client} is in ipDeny`);
      if (access.allow.length && !inBlocks(ip, access.allow)) return refuse(403, 'ip-not-allowed', `client ${client} is not in ipAllow`);
    }
    if (access.rate) {
      const wait = this.#rates.take(route.id, client, access.rate.perSecond, access.rate.burst);
      if (wait > 0) {
        return refuse(
          429,
          'rate-limited',
          `client ${client} exceeds the rate limit of ${access.rate.perSecond}/s (burst ${access.rate.burst})`,
          { 'Retry-After': String(Math.max(1, Math.ceil(wait))) },
        );
      }
    }
    return undefined;
  }

  async #basicAuth(route: LiveRoute, req: IncomingMessage): Promise<HttpError | undefined> {
    const given = header(req, 'authorization');
    const challenge = { 'WWW-Authenticate': `Basic realm="${route.hostname}", charset="UTF-8"` };
    if (!given) return refuse(401, 'unauthorized', 'basic auth required', challenge);
    const user = await this.#basic.check(route.id, route.access.users, given);
    if (user === BUSY) return refuse(429, 'auth-busy', 'too many basic auth checks under way', { 'Retry-After': '1' });
    if (!user) return refuse(401, 'unauthorized', 'wrong username or password (basic auth)', challenge);
    delete req.headers.authorization;
    return undefined;
  }

  async #apiKey(route: LiveRoute, req: IncomingMessage, admitted: Admitted): Promise<HttpError | undefined> {
    const challenge = { 'WWW-Authenticate': `Bearer realm="${route.hostname}"` };
    const fromQuery = takeToken(admitted);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '')?.[1];
    const token = header(req, 'x-api-key')?.trim() || bearer || fromQuery;
    if (!token) return refuse(401, 'unauthorized', 'API key required (X-API-KEY header or ?token=)', challenge);
    const verdict = await this.#ctx.keys.verifyForRoute(token, route.id);
    if (!verdict) return refuse(401, 'unauthorized', 'invalid, expired or revoked route key', challenge);
    if (verdict === 'other-route') return refuse(403, 'forbidden', 'the key is not scoped to this route');
    delete req.headers['x-api-key'];
    if (bearer) delete req.headers.authorization;
    return undefined;
  }
}

/** Removes `token=` from the query of `admitted.forward` (the other parameters stay byte for byte); returns its value. */
function takeToken(admitted: Admitted): string | undefined {
  const q = admitted.forward.indexOf('?');
  if (q < 0 || !admitted.forward.includes('token=', q)) return undefined;
  let token: string | undefined;
  const kept = admitted.forward
    .slice(q + 1)
    .split('&')
    .filter((part) => {
      if (!part.startsWith('token=')) return true;
      try {
        token ??= decodeURIComponent(part.slice(6).replace(/\+/g, ' '));
      } catch {
        /* malformed: not a key */
      }
      return false;
    });
  admitted.forward = admitted.forward.slice(0, q) + (kept.length ? `?${kept.join('&')}` : '');
  return token;
}
