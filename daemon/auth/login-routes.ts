import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import { readForm } from '../http/body.ts';
import { sessionCookie } from '../http/cookies.ts';
import { overTls } from '../http/https-redirect.ts';
import type { RouterLike } from '../http/router-like.ts';
import { csrfOfRequest, sendLoginPage } from './login-form.ts';
import { startSession } from './login-session.ts';
import { ssoButtonOf } from './oidc/login-routes.ts';
import { DUMMY_HASH, verifyPassword } from './passwords.ts';
import { SESSION_COOKIE, tokensEqual } from './sessions.ts';
import { secondStep } from './two-factor/login-step.ts';

function redirect(res: ServerResponse, location: string, cookie?: string): void {
  const headers: Record<string, string> = { Location: location, 'Cache-Control': 'no-store' };
  if (cookie) headers['Set-Cookie'] = cookie;
  res.writeHead(302, headers).end();
}

/**
 * `GET /login`, `POST /login`, `POST /logout` (docs/API.md#sessions-and-csrf): the form
 * login of the seed, with CSRF on every form post and throttling per username.
 */
export function loginRoutes(ctx: DaemonContext) {
  const { sessions } = ctx;

  /** The CSRF token that belongs to this request's cookie, whether logged in or not. */
  const csrfFor = (req: IncomingMessage) => csrfOfRequest(sessions, req);

  return (router: RouterLike) => {
    router.get('/login', async (req, res) => {
      const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      const notice = query.has('error') ? 'error' : query.has('logout') ? 'logout' : query.has('throttled') ? 'throttled' : undefined;
      const options = { passwordForm: ctx.config.identity.passwordLogin, sso: ssoButtonOf(ctx, query.get('return')) };
      await sendLoginPage(sessions, req, res, { notice, options });
    });

    router.post('/login', async (req, res) => {
      if (!ctx.config.identity.passwordLogin)
        throw new HttpError(403, 'password-login-off', 'Password login is turned off on this daemon: sign in with single sign-on');
      const form = await readForm(req);
      const { csrf, hash: previous } = await csrfFor(req);
      if (!tokensEqual(form.get('_csrf') ?? undefined, csrf)) {
        throw new HttpError(403, 'csrf', 'Missing or invalid CSRF token: load /login first and post its _csrf field');
      }
      const username = (form.get('username') ?? '').slice(0, 256);
      const password = (form.get('password') ?? '').slice(0, 1024);
      const wait = ctx.loginThrottle.retryAfter(username);
      if (wait > 0) {
        throw new HttpError(429, 'login-throttled', `Too many failed logins for this user; retry in ${wait} s`, {
          headers: { 'Retry-After': String(wait) },
        });
      }
      const user = await ctx.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
      // A user created by single sign-on has no password: it is compared like a missing user, so timing tells nothing.
      const ok = (await verifyPassword(password, user?.password_hash || DUMMY_HASH)) && Boolean(user?.password_hash);
      if (!user || !ok) {
        ctx.loginThrottle.fail(username);
        ctx.log.info({ username: username.slice(0, 64) }, 'login failed');
        redirect(res, '/login?error');
        return;
      }
      ctx.loginThrottle.succeed(username);
      // Logging in again from a live session replaces it rather than leaving it valid.
      if (previous) {
        await sessions.destroy(previous);
        ctx.streams.changed();
      }
      // A second factor, or the enrolment --two-factor-required demands, comes before any session.
      const pending = await secondStep(ctx, user, csrf!, req);
      if (pending) {
        redirect(res, '/login/2fa', pending);
        return;
      }
      redirect(res, '/api', await startSession(ctx, user, csrf!, 'password', overTls(req)));
    });

    router.post('/logout', async (req, res) => {
      const { csrf, hash } = await csrfFor(req);
      const contentType = req.headers['content-type'] ?? '';
      const sent = contentType.startsWith('application/x-www-form-urlencoded')
        ? ((await readForm(req)).get('_csrf') ?? undefined)
        : (req.headers['x-csrf-token'] as string | undefined);
      if (hash && !tokensEqual(sent, csrf)) throw new HttpError(403, 'csrf', 'Missing or invalid CSRF token');
      if (hash) {
        await sessions.destroy(hash);
        ctx.streams.changed();
      }
      redirect(res, '/login?logout', sessionCookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure: overTls(req) }));
    });
  };
}
