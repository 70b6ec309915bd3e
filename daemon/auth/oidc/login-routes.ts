import { overTls } from '../../http/https-redirect.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, notFound } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { readCookie, sessionCookie } from '../../http/cookies.ts';
import { sendProblem } from '../../http/problem.ts';
import type { RouterLike } from '../../http/router-like.ts';
import { csrfOfRequest, sendLoginPage } from '../login-form.ts';
import { boxFor } from '../secret-box.ts';
import { SESSION_COOKIE } from '../sessions.ts';
import { finishCliSignIn } from './cli-routes.ts';
import { CALLBACK_PATH, callbackUrl } from './callback-url.ts';
import { beginSignIn, clearTransactionCookie, completeSignIn, transactionCookie } from './flow.ts';
import { DEFAULT_RETURN, safeReturnPath } from './return-path.ts';
import { signInUser } from './users.ts';

/** The login page's "Sign in with <name>" link, carrying a safe return path; undefined without --oidc-issuer. */
export function ssoButtonOf(ctx: DaemonContext, returnTo: string | null): { name: string; href: string } | undefined {
  if (!ctx.oidc) return undefined;
  const path = safeReturnPath(returnTo);
  return { name: ctx.oidc.settings.name, href: path === DEFAULT_RETURN ? '/login/sso' : `/login/sso?return=${encodeURIComponent(path)}` };
}

const queryOf = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://request.invalid');

/**
 * `GET /login/sso` and `GET /login/sso/callback`: the daemon's single sign-on
 * (docs/API.md#single-sign-on). The sign-in under way lives in a sealed cookie
 * (flow.ts), so any pod takes the callback; it ends in a session like the
 * password login's (method `sso`), or, for `monctl login --sso`, in cli-routes.ts.
 */
export function ssoLoginRoutes(ctx: DaemonContext) {
  const box = boxFor(ctx.installSecret, 'sso-transactions');

  return (router: RouterLike) => {
    router.get('/login/sso', async (req, res) => {
      const issuer = ctx.oidc;
      if (!issuer) throw notFound('Single sign-on is not set up on this daemon (--oidc-issuer)');
      try {
        const redirectUri = callbackUrl(req, ctx.config);
        const returnTo = safeReturnPath(queryOf(req).searchParams.get('return'));
        const { url, tx, sealed } = await beginSignIn(issuer, box, { purpose: 'login', redirectUri, returnTo });
        const cookie = transactionCookie(tx, sealed, redirectUri.startsWith('https:'));
        res.writeHead(302, { Location: url, 'Cache-Control': 'no-store', 'Set-Cookie': cookie }).end();
      } catch (err) {
        await refuse(ctx, req, res, err, undefined);
      }
    });

    router.get(CALLBACK_PATH, async (req, res) => {
      const issuer = ctx.oidc;
      if (!issuer) throw notFound('Single sign-on is not set up on this daemon (--oidc-issuer)');
      const url = queryOf(req);
      let redirectUri: string | undefined;
      try {
        redirectUri = callbackUrl(req, ctx.config);
        const { identity, tx } = await completeSignIn(issuer, box, {
          url,
          cookie: (name) => readCookie(req, name),
          purposes: ['login', 'cli'],
          redirectUri,
        });
        const user = await signInUser(ctx.db, issuer.settings, identity);
        if (user.roleChanged) ctx.streams.changed();
        ctx.log.info({ username: user.username, role: user.role, issuer: identity.issuer, purpose: tx.purpose }, 'sso login');
        if (tx.purpose === 'cli') {
          await finishCliSignIn(ctx, tx, user, res);
          return;
        }
        // As the password login: a new session id (no fixation), the CSRF token of the browser's cookie, a live session replaced.
        const { csrf, hash: previous } = await csrfOfRequest(ctx.sessions, req);
        if (previous) {
          await ctx.sessions.destroy(previous);
          ctx.streams.changed();
        }
        const sessionId = await ctx.sessions.create(user.id, csrf ?? ctx.sessions.preLoginCsrf(ctx.sessions.newId()), Date.now(), 'sso');
        res
          .writeHead(302, {
            Location: safeReturnPath(tx.returnTo),
            'Cache-Control': 'no-store',
            'Set-Cookie': [clearTransactionCookie(tx), sessionCookie(SESSION_COOKIE, sessionId, { secure: overTls(req) })],
          })
          .end();
      } catch (err) {
        const state = url.searchParams.get('state');
        await refuse(ctx, req, res, err, state && redirectUri ? clearTransactionCookie({ state, redirectUri }) : undefined);
      }
    });
  };
}

/**
 * A refused sign-in, logged (its code and reason; never a token) and answered
 * with its 4xx (503 while the provider is down): a browser gets the login page
 * at that status with the reason and a new "Sign in with …", other clients
 * problem+json. The transaction's cookie is cleared: a sign-in is tried once.
 */
async function refuse(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, err: unknown, clear: string | undefined) {
  if (!(err instanceof HttpError)) throw err;
  ctx.log.warn({ code: err.code, status: err.status, reason: err.message }, 'sso refused');
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (!String(req.headers.accept ?? '').includes('text/html')) {
    if (clear) res.setHeader('Set-Cookie', clear);
    sendProblem(req, res, err);
    return;
  }
  await sendLoginPage(ctx.sessions, req, res, {
    status: err.status,
    options: { passwordForm: ctx.config.identity.passwordLogin, sso: ssoButtonOf(ctx, null), refusal: err.message },
    setCookies: clear ? [clear] : [],
  });
}
