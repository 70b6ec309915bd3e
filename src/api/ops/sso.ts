import { defineOperation } from '../operation.ts';
import { SsoCliLogin, SsoDevice, SsoDevicePoll, SsoDeviceResult, SsoHandoff } from '../schemas/sso.ts';

const tag = 'Session';

/** Operations of `monctl login --sso` (docs/API.md#cli-single-sign-on). */
export const ssoOperations = {
  startSsoDevice: defineOperation({
    id: 'startSsoDevice',
    method: 'POST',
    path: '/api/auth/sso/device',
    tag,
    access: 'public',
    summary: 'Start a device sign-in at the OpenID provider',
    description:
      'The daemon starts the device authorization grant with its own client credentials and answers the code the user ' +
      'confirms at the provider, and a `handle` (the grant, sealed) to poll with. 404 `sso-off` without single sign-on; ' +
      '409 `sso-no-device-grant` when the provider lacks the grant (use the loopback sign-in, `GET /login/sso/cli`).',
    response: SsoDevice,
    errors: [404, 409, 503],
  }),
  pollSsoDevice: defineOperation({
    id: 'pollSsoDevice',
    method: 'POST',
    path: '/api/auth/sso/device/token',
    tag,
    access: 'public',
    summary: 'Poll a device sign-in once',
    description:
      'One request to the provider per call: `pending` or `slow_down` until the user approves, then `complete` with a new ' +
      'API key of the signed-in user, role included. A poll sooner than the `interval` answers `slow_down` without ' +
      'asking the provider. A wrong handle: 400 `sso-handle`; an expired grant: 400 `sso-expired`; a refusal: 403 `sso-denied`.',
    body: SsoDevicePoll,
    response: SsoDeviceResult,
    errors: [400, 403, 503],
  }),
  redeemSsoHandoff: defineOperation({
    id: 'redeemSsoHandoff',
    method: 'POST',
    path: '/api/auth/sso/handoff',
    tag,
    access: 'public',
    summary: 'Exchange a loopback sign-in code for an API key',
    description:
      "The one-time code the daemon handed to the CLI's loopback port after a browser sign-in: valid for 2 minutes, once. " +
      'A wrong, used or expired code: 400 `sso-handoff`.',
    body: SsoHandoff,
    response: SsoCliLogin,
    errors: [400],
  }),
} as const;
