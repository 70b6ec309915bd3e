import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../../src/errors.ts';
import { hostWithoutPort } from '../../../src/tunnel/protocol.ts';
import { beginSignIn, clearTransactionCookie, completeSignIn, transactionCookie } from '../../auth/oidc/flow.ts';
import { boxFor } from '../../auth/secret-box.ts';
import type { DaemonContext } from '../../context.ts';
import { cookieJar } from '../../http/cookies.ts';
import { overTls } from '../../http/https-redirect.ts';
import { safeReturnPath } from '../../auth/oidc/return-path.ts';
import { isHostAuthority } from '../../auth/oidc/callback-url.ts';
import { SIGNED_OUT_PAGE, SsoAnswer } from './sso-answer.ts';
import type { LiveRoute } from '../route-table.ts';
import { dropIdentityHeaders, ruleRefusal, setIdentityHeaders } from './sso-rules.ts';
import { clearSessionCookie, openSession, type RouteSession, sealSession, sessionCookie, stripEdgeCookies } from './sso-session.ts';

/** The paths the edge answers itself on every hostname with a route behind sign-in, whatever its pathPrefix. */
export const SSO_PATH = '/.monctl/sso/';
const CALLBACK = `${SSO_PATH}callback`;
const LOGOUT = `${SSO_PATH}logout`;

/** The code of the redirect to the provider: counted as a refusal, as basic auth's 401 is. */
export const SIGN_IN_REQUIRED = 'sign-in-required';

/** A same-host path to come back to after the sign-in, or the route's root (auth/oidc/return-path.ts). */
export const sameHostPath = (path: string) => safeReturnPath(path, '/');
const wantsHtml = (req: IncomingMessage) =>
  (req.method === 'GET' || req.method === 'HEAD') && !req.headers.upgrade && /text\/html/i.test(String(req.headers.accept ?? ''));

/**
 * Sign-in in front of a route (`auth: oidc`, docs/API.md#route-sign-in): a session cookie
 * sealed with the install secret (any pod opens it) and bound to the host; the route's
 * current rules are checked on every request. Without a session, a browser is sent to the
 * provider; anything else gets a 401. The callback and logout are served on the route's host.
 */
export class SsoGate {
  readonly #ctx: DaemonContext;
  /** The routes of a host (the callback checks the rules of the route that started the sign-in). */
  readonly #routesOf: (host: string) => readonly LiveRoute[];

  constructor(ctx: DaemonContext, routesOf: (host: string) => readonly LiveRoute[]) {
    this.#ctx = ctx;
    this.#routesOf = routesOf;
  }

  /** A refusal, a redirect (SsoAnswer), or undefined: admitted, the target told who it is. */
  async check(route: LiveRoute, req: IncomingMessage, hostHeader: string | undefined, forward: string): Promise<HttpError | undefined> {
    try {
      return await this.#check(route, req, hostHeader, forward);
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
  }

  async #check(route: LiveRoute, req: IncomingMessage, hostHeader: string | undefined, forward: string): Promise<HttpError | undefined> {
    dropIdentityHeaders(req);
    const issuer = this.#ctx.oidc;
    if (!issuer) return new HttpError(503, 'sso-unavailable', 'access: the route signs in through single sign-on, which is not set up');
    const authority = (hostHeader ?? '').trim().toLowerCase();
    if (!isHostAuthority(authority)) return new HttpError(400, 'bad-request', 'access: the Host header is not a host name');
    const host = hostWithoutPort(authority);
    const path = forward.split('?')[0]!;
    const redirectUri = `${overTls(req) ? 'https' : 'http'}://${authority}${CALLBACK}`;
    if (path.startsWith(SSO_PATH)) {
      if (req.headers.upgrade) return new HttpError(400, 'bad-request', `access: ${path} takes no upgrade`);
      if (path === CALLBACK) return this.#callback(req, host, forward, redirectUri);
      if (path === LOGOUT)
        return new SsoAnswer(200, 'signed-out', 'signed out', { html: SIGNED_OUT_PAGE, cookies: [clearSessionCookie(req)] });
      return new HttpError(404, 'no-route', `access: ${path} is reserved for the sign-in`);
    }
    const rules = route.access.sso;
    if (!rules) return new HttpError(403, 'sso-forbidden', 'access: the route has no sign-in rules');
    const now = Date.now();
    const session = openSession(this.#box(), req, host, issuer.settings.issuer, now);
    if (session && now < session.issuedAt + this.#ttlSeconds(route) * 1000) {
      const why = ruleRefusal(rules, session);
      if (why) return new HttpError(403, 'sso-forbidden', `access: ${why} (sign out at ${LOGOUT})`);
      setIdentityHeaders(req, session);
      stripEdgeCookies(req);
      return undefined;
    }
    if (!wantsHtml(req))
      return new HttpError(
        401,
        'unauthorized',
        `access: sign-in required: open the route in a browser (session cookie missing or expired)`,
      );
    const started = await beginSignIn(issuer, this.#transactions(), {
      purpose: 'route',
      redirectUri,
      returnTo: sameHostPath(forward),
      extra: { route: String(route.id) },
    });
    return new SsoAnswer(302, SIGN_IN_REQUIRED, 'sign-in required: redirected to the provider', {
      location: started.url,
      cookies: [transactionCookie(started.tx, started.sealed, overTls(req))],
    });
  }

  async #callback(req: IncomingMessage, host: string, forward: string, redirectUri: string): Promise<HttpError> {
    if (req.method !== 'GET') return new HttpError(405, 'method-not-allowed', 'access: the sign-in callback takes GET');
    const issuer = this.#ctx.oidc!;
    const jar = cookieJar(req);
    const q = forward.indexOf('?');
    const query = q < 0 ? '' : forward.slice(q);
    const { identity, tx } = await completeSignIn(issuer, this.#transactions(), {
      url: new URL(`${redirectUri}${query}`),
      cookie: (name) => jar.get(name),
      purposes: ['route'],
      redirectUri,
    });
    const cookies = [clearTransactionCookie(tx)];
    const routes = this.#routesOf(host).filter((r) => r.access.sso);
    const route = routes.find((r) => String(r.id) === tx.extra.route);
    if (!route?.access.sso) return new SsoAnswer(403, 'sso-forbidden', 'the route no longer signs in', { cookies });
    const now = Date.now();
    const ttl = this.#ttlSeconds(route);
    const session: RouteSession = {
      host,
      issuer: issuer.settings.issuer,
      subject: identity.subject,
      email: identity.email ?? null,
      emailVerified: identity.emailVerified,
      name: identity.name ?? null,
      username: identity.username ?? null,
      groups: identity.groups,
      issuedAt: now,
      expiresAt: now + ttl * 1000,
    };
    const why = ruleRefusal(route.access.sso, session);
    if (why) return new SsoAnswer(403, 'sso-forbidden', why, { cookies });
    const wanted = new Set(routes.flatMap((r) => r.access.sso!.groups));
    cookies.push(sessionCookie(req, sealSession(this.#box(), session, wanted), ttl));
    return new SsoAnswer(302, 'signed-in', 'signed in', { location: sameHostPath(tx.returnTo), cookies });
  }

  #ttlSeconds(route: LiveRoute): number {
    return route.access.sso?.sessionTtl ?? Math.floor(this.#ctx.config.identity.routeSessionMs / 1000);
  }

  #box() {
    return boxFor(this.#ctx.installSecret, 'route-sessions');
  }

  #transactions() {
    return boxFor(this.#ctx.installSecret, 'sso-transactions');
  }
}
