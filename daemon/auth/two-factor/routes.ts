import type { DaemonContext } from '../../context.ts';
import type { Handlers } from '../../http/bind.ts';
import type { RouterLike } from '../../http/router-like.ts';

/** Handlers of enrolment, confirmation and reset of TOTP second factors (docs/API.md#two-factor-login). */
export const twoFactorHandlers: Handlers = {};

/** `GET|POST /login/2fa`: the code asked after the password. */
export function twoFactorRoutes(_ctx: DaemonContext) {
  return (_router: RouterLike) => {};
}
