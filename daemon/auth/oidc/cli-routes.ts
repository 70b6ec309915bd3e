import type { DaemonContext } from '../../context.ts';
import type { Handlers } from '../../http/bind.ts';
import type { RouterLike } from '../../http/router-like.ts';

/** Handlers of `monctl login --sso` (docs/API.md#cli-single-sign-on): the device grant and the loopback hand-off. */
export const cliSsoHandlers: Handlers = {};

/** Raw routes of the CLI's loopback sign-in, if it needs any. */
export function cliSsoRoutes(_ctx: DaemonContext) {
  return (_router: RouterLike) => {};
}
