import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { HttpError } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { boxFor } from '../secret-box.ts';
import { type CliLogin, createCliKey } from './cli-key.ts';
import { identityFrom, refusalOf } from './flow.ts';
import type { OidcIssuer } from './issuer.ts';
import { signInUser } from './users.ts';

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

/** The device grant as the CLI holds it between polls: sealed, so any pod can take the next poll. */
interface DeviceHandle {
  deviceCode: string;
  expiresAt: number;
  interval: number;
}

export function ssoOff(ctx: DaemonContext): OidcIssuer {
  if (!ctx.oidc) throw new HttpError(404, 'sso-off', 'single sign-on is not set up on this daemon (--oidc-issuer)');
  return ctx.oidc;
}

/** Starts the device authorization grant at the provider, with the daemon's client credentials. */
export async function startDevice(ctx: DaemonContext, now = ctx.clock.now()) {
  const issuer = ssoOff(ctx);
  if (!(await issuer.supportsDeviceGrant()))
    throw new HttpError(
      409,
      'sso-no-device-grant',
      'the OpenID provider offers no device authorization grant: use the loopback sign-in (monctl login --sso --no-device)',
    );
  const config = await issuer.configuration();
  let grant: client.DeviceAuthorizationResponse;
  try {
    grant = await client.initiateDeviceAuthorization(config, { scope: issuer.settings.scopes.join(' ') });
  } catch (err) {
    throw refusalOf(err);
  }
  const interval = Math.min(Math.max(grant.interval ?? 5, 1), 60);
  const expiresIn = Math.min(Math.max(grant.expires_in, 1), 3600);
  const handle: DeviceHandle = { deviceCode: grant.device_code, expiresAt: now + expiresIn * 1000, interval };
  return {
    userCode: grant.user_code,
    verificationUri: grant.verification_uri,
    verificationUriComplete: grant.verification_uri_complete ?? null,
    expiresIn,
    interval,
    handle: boxFor(ctx.installSecret, 'sso-transactions').seal(JSON.stringify({ device: handle })),
  };
}

/**
 * When each handle may poll the provider next, on this pod: a CLI polling
 * faster than the interval gets `slow_down` without a request to the
 * provider. Bounded: expired grants are dropped once the map is large.
 */
const nextPoll = new Map<string, { at: number; expiresAt: number }>();
const MAX_TRACKED = 10_000;

function throttled(key: string, handle: DeviceHandle, now: number, interval: number): boolean {
  const entry = nextPoll.get(key);
  // Half a second of slack: the CLI waits the interval after each answer, so a poll on time is never early.
  if (entry && now < entry.at - 500) return true;
  if (nextPoll.size >= MAX_TRACKED) {
    for (const [k, v] of nextPoll) if (v.expiresAt < now) nextPoll.delete(k);
    if (nextPoll.size >= MAX_TRACKED) nextPoll.delete(nextPoll.keys().next().value!);
  }
  nextPoll.set(key, { at: now + interval * 1000, expiresAt: handle.expiresAt });
  return false;
}

/** One poll of the provider's token endpoint for a device grant; on approval, the user signs in and gets a CLI key. */
export async function pollDevice(
  ctx: DaemonContext,
  body: { handle: string; host?: string },
  now = ctx.clock.now(),
): Promise<CliLogin | { status: 'pending' | 'slow_down' }> {
  const issuer = ssoOff(ctx);
  const opened = boxFor(ctx.installSecret, 'sso-transactions').open(body.handle);
  const handle = opened ? (JSON.parse(opened) as { device?: DeviceHandle }).device : undefined;
  if (!handle) throw new HttpError(400, 'sso-handle', 'this is not a device sign-in of this daemon: start again (monctl login --sso)');
  if (handle.expiresAt < now) throw new HttpError(400, 'sso-expired', 'the device sign-in expired before it was approved: start again');
  const key = createHash('sha256').update(handle.deviceCode).digest('base64url');
  if (throttled(key, handle, now, handle.interval)) return { status: 'slow_down' };
  const config = await issuer.configuration();
  let tokens: Awaited<ReturnType<typeof client.genericGrantRequest>>;
  try {
    tokens = await client.genericGrantRequest(config, DEVICE_CODE, { device_code: handle.deviceCode });
  } catch (err) {
    const code = (err as { error?: string }).error;
    if (code === 'authorization_pending') return { status: 'pending' };
    if (code === 'slow_down') {
      nextPoll.set(key, { at: now + (handle.interval + 5) * 1000, expiresAt: handle.expiresAt });
      return { status: 'slow_down' };
    }
    nextPoll.delete(key);
    if (code === 'expired_token') throw new HttpError(400, 'sso-expired', 'the device sign-in expired before it was approved: start again');
    if (code === 'access_denied') throw new HttpError(403, 'sso-denied', 'the sign-in was refused at the provider');
    if (code === 'invalid_grant')
      throw new HttpError(400, 'sso-handle', 'the provider does not know this device sign-in (used already?): start again');
    throw refusalOf(err);
  }
  nextPoll.delete(key);
  const user = await signInUser(ctx.db, issuer.settings, await identityFrom(issuer, config, tokens));
  return createCliKey(ctx, user, body.host);
}
