import { overTls } from '../http/https-redirect.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readCookie, sessionCookie } from '../http/cookies.ts';
import { pageHeaders } from '../http/page-headers.ts';
import { type LoginPageOptions, loginPage } from './login-page.ts';
import { SESSION_COOKIE, type Sessions } from './sessions.ts';

/** The login page has no script at all: nothing but its inline style and posting to itself. */
export const LOGIN_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** The browser's cookie and the CSRF token that belongs to it, whether logged in (`hash`: the live session) or not. */
export async function csrfOfRequest(
  sessions: Sessions,
  req: IncomingMessage,
): Promise<{ sessionId: string | undefined; csrf: string | undefined; hash?: string }> {
  const sessionId = readCookie(req, SESSION_COOKIE);
  if (!sessionId) return { sessionId, csrf: undefined };
  const live = await sessions.find(sessionId);
  if (live) return { sessionId, csrf: live.csrfToken, hash: live.idHash };
  return { sessionId, csrf: sessions.preLoginCsrf(sessionId) };
}

/**
 * Answers with the login page: its CSRF token is the one of the browser's cookie,
 * or of a new pre-login cookie it sets. `status` is 200, or a refusal's 4xx.
 */
export async function sendLoginPage(
  sessions: Sessions,
  req: IncomingMessage,
  res: ServerResponse,
  page: { status?: number; notice?: 'error' | 'logout' | 'throttled'; options: LoginPageOptions; setCookies?: string[] },
): Promise<void> {
  let { sessionId, csrf } = await csrfOfRequest(sessions, req);
  const cookies: string[] = [];
  if (!sessionId || !csrf) {
    sessionId = sessions.newId();
    csrf = sessions.preLoginCsrf(sessionId);
    cookies.push(sessionCookie(SESSION_COOKIE, sessionId, { secure: overTls(req) }));
  }
  const html = loginPage(csrf, page.notice, page.options);
  const headers: Record<string, string | number | string[]> = { ...pageHeaders(LOGIN_CSP), 'Content-Length': Buffer.byteLength(html) };
  const set = [...(page.setCookies ?? []), ...cookies];
  if (set.length) headers['Set-Cookie'] = set;
  res.writeHead(page.status ?? 200, headers).end(html);
}
