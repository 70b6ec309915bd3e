import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { readForm } from '../../http/body.ts';
import { readCookie } from '../../http/cookies.ts';
import { pageHeaders } from '../../http/page-headers.ts';
import { overTls } from '../../http/https-redirect.ts';
import type { RouterLike } from '../../http/router-like.ts';
import { startSession } from '../login-session.ts';
import { boxFor } from '../secret-box.ts';
import { SESSION_COOKIE, tokensEqual } from '../sessions.ts';
import { enableFactor, loadFactor } from './factor.ts';
import { codePage, enrolPage, recoveryCodesPage } from './pages.ts';
import { clearPendingCookie, type PendingLogin, readPending } from './pending-login.ts';
import { enrolment } from './totp.ts';
import { checkCode } from './verify.ts';

export { twoFactorHandlers } from './handlers.ts';

/** As /login: no script at all, only the inline style; the QR code is inline SVG. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(res: ServerResponse, html: string, cookies: string[] = []): void {
  const headers: Record<string, string | number | string[]> = { ...pageHeaders(PAGE_CSP), 'Content-Length': Buffer.byteLength(html) };
  if (cookies.length) headers['Set-Cookie'] = cookies;
  res.writeHead(200, headers).end(html);
}

function redirect(res: ServerResponse, location: string, cookies: string[] = []): void {
  const headers: Record<string, string | string[]> = { Location: location, 'Cache-Control': 'no-store' };
  if (cookies.length) headers['Set-Cookie'] = cookies;
  res.writeHead(302, headers).end();
}

/** `GET|POST /login/2fa`: the code asked after the password, or the enrolment the daemon requires. */
export function twoFactorRoutes(ctx: DaemonContext) {
  const pendingBox = boxFor(ctx.installSecret, 'pending-logins');
  const secretBox = boxFor(ctx.installSecret, 'totp-secrets');

  /**
   * The request's pending login, when it belongs to this browser: its CSRF token is the one
   * derived from the pre-login cookie, so a pending cookie carried to another browser is refused.
   */
  function pendingOf(req: IncomingMessage): PendingLogin | undefined {
    const pending = readPending(pendingBox, req);
    const preLogin = readCookie(req, SESSION_COOKIE);
    if (!pending || !preLogin || !tokensEqual(ctx.sessions.preLoginCsrf(preLogin), pending.csrf)) return undefined;
    return pending;
  }

  return (router: RouterLike) => {
    router.get('/login/2fa', async (req, res) => {
      const pending = pendingOf(req);
      if (!pending) return redirect(res, '/login', [clearPendingCookie(req)]);
      const error = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').has('error');
      if (pending.secret === undefined) return page(res, codePage(pending.csrf, error));
      const user = await loadFactor(ctx.db, secretBox, { id: pending.userId });
      if (!user) return redirect(res, '/login', [clearPendingCookie(req)]);
      const shown = await enrolment(pending.secret, user.username);
      page(res, enrolPage(pending.csrf, shown.secret, shown.qrSvg, error));
    });

    router.post('/login/2fa', async (req, res) => {
      const form = await readForm(req);
      const pending = pendingOf(req);
      if (!pending) return redirect(res, '/login', [clearPendingCookie(req)]);
      if (!tokensEqual(form.get('_csrf') ?? undefined, pending.csrf)) {
        throw new HttpError(403, 'csrf', 'Missing or invalid CSRF token: post the _csrf field of /login/2fa');
      }
      const code = (form.get('code') ?? '').slice(0, 64);
      const user = await loadFactor(ctx.db, secretBox, { id: pending.userId });
      if (!user) return redirect(res, '/login', [clearPendingCookie(req)]);
      if (pending.secret !== undefined) {
        // Enrolment at login: confirming shows the recovery codes once, with the session already set.
        const codes = code ? await enableFactor(ctx.db, secretBox, user.id, pending.secret, code) : undefined;
        if (!codes) return failed(res, user.username);
        ctx.log.info({ username: user.username }, 'two-factor enrolled at login');
        return page(res, recoveryCodesPage(codes), [
          await startSession(ctx, user, pending.csrf, 'password+totp', overTls(req)),
          clearPendingCookie(req),
        ]);
      }
      // The factor may have been reset since the password step: then the pending login is void.
      if (!user.enabled || !user.secret) return redirect(res, '/login', [clearPendingCookie(req)]);
      const kind = code ? await checkCode(ctx.db, user.id, code, { secret: user.secret, recovery: true }) : undefined;
      if (!kind) return failed(res, user.username);
      if (kind === 'recovery') ctx.log.info({ username: user.username }, 'recovery code used');
      redirect(res, '/api', [await startSession(ctx, user, pending.csrf, 'password+totp', overTls(req)), clearPendingCookie(req)]);
    });
  };

  function failed(res: ServerResponse, username: string): void {
    ctx.log.info({ username: username.slice(0, 64) }, 'two-factor code refused');
    redirect(res, '/login/2fa?error');
  }
}
