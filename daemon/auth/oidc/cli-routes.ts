import type { ServerResponse } from 'node:http';
import type { DaemonContext } from '../../context.ts';
import type { Handlers } from '../../http/bind.ts';
import type { RouterLike } from '../../http/router-like.ts';
import type { SignInTransaction } from './flow.ts';
import type { SsoUser } from './users.ts';

/** Handlers of `monctl login --sso` (docs/API.md#cli-single-sign-on): the device grant and the loopback hand-off. */
export const cliSsoHandlers: Handlers = {};

/** Raw routes of the CLI's loopback sign-in, if it needs any. */
export function cliSsoRoutes(_ctx: DaemonContext) {
  return (_router: RouterLike) => {};
}

/**
 * The end of a loopback sign-in of `monctl login --sso` (a transaction with purpose `cli`), called by the
 * daemon's SSO callback (login-routes.ts) once the user is signed in: it answers the browser.
 */
export async function finishCliSignIn(_ctx: DaemonContext, _tx: SignInTransaction, _user: SsoUser, res: ServerResponse): Promise<void> {
  res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not built yet');
}
