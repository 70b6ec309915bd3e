import type { LoginMethod } from '../../src/api/schemas/auth.ts';
import type { DaemonContext } from '../context.ts';
import { sessionCookie } from '../http/cookies.ts';
import { SESSION_COOKIE } from './sessions.ts';

/**
 * The end of a form login, once every step passed: a new session keeping the login page's
 * CSRF token, the user's last login method, and the session cookie to set.
 */
export async function startSession(
  ctx: DaemonContext,
  user: { id: number; username: string },
  csrf: string,
  method: LoginMethod,
  secure: boolean,
): Promise<string> {
  const sessionId = await ctx.sessions.create(user.id, csrf, Date.now(), method);
  await ctx.db.updateTable('users').set({ last_login_method: method }).where('id', '=', user.id).execute();
  ctx.log.info({ username: user.username, method }, 'login');
  return sessionCookie(SESSION_COOKIE, sessionId, { secure });
}
