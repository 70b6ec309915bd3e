import type { DaemonContext } from '../../context.ts';
import type { RouterLike } from '../../http/router-like.ts';

/** `GET /login/sso` and `GET /login/sso/callback`: the daemon's single sign-on (docs/API.md#single-sign-on). */
export function ssoLoginRoutes(_ctx: DaemonContext) {
  return (_router: RouterLike) => {};
}
