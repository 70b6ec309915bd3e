import * as client from 'openid-client';
import { HttpError } from '../../../src/errors.ts';
import type { SecretBox } from '../secret-box.ts';
import { type Identity, identityOf } from './identity.ts';
import type { OidcIssuer } from './issuer.ts';

/** What a sign-in is for: the daemon's login page, `monctl login --sso` (loopback), or a route's edge. */
export type SignInPurpose = 'login' | 'cli' | 'route';

/** The state of one sign-in between the redirect to the provider and its callback; sealed in a cookie. */
export interface SignInTransaction {
  purpose: SignInPurpose;
  redirectUri: string;
  state: string;
  nonce: string;
  verifier: string;
  /** Where the user goes after the callback: a path on the same origin (checked by the caller). */
  returnTo: string;
  /** What the caller needs back (the CLI's loopback port, a route id). */
  extra: Record<string, string>;
  expiresAt: number;
}

/** A sign-in must come back within this time. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

/**
 * The transaction cookie's name holds the start of the state, so two tabs signing in at once do
 * not overwrite each other's; its Path is the callback's, so it never reaches anything else (a route's target).
 */
export const transactionCookieName = (state: string) => `monctl_sso_${state.slice(0, 16)}`;

export function transactionCookie(tx: SignInTransaction, sealed: string, secure: boolean): string {
  const path = new URL(tx.redirectUri).pathname;
  const parts = [
    `${transactionCookieName(tx.state)}=${sealed}`,
    `Path=${path}`,
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${SIGN_IN_TTL_MS / 1000}`,
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** The Set-Cookie that removes a transaction's cookie once it is used. */
export function clearTransactionCookie(tx: Pick<SignInTransaction, 'state' | 'redirectUri'>): string {
  return `${transactionCookieName(tx.state)}=; Path=${new URL(tx.redirectUri).pathname}; HttpOnly; SameSite=Lax; Max-Age=0`;
}

/**
 * Starts the authorization code flow with PKCE (S256), `state` and `nonce`:
 * the provider's authorization URL, and the transaction to seal in a cookie
 * (transactionCookie). Nothing is stored: any pod can take the callback.
 */
export async function beginSignIn(
  issuer: OidcIssuer,
  box: SecretBox,
  start: { purpose: SignInPurpose; redirectUri: string; returnTo: string; extra?: Record<string, string>; now?: number },
): Promise<{ url: string; tx: SignInTransaction; sealed: string }> {
  const config = await issuer.configuration();
  const tx: SignInTransaction = {
    purpose: start.purpose,
    redirectUri: start.redirectUri,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    returnTo: start.returnTo,
    extra: start.extra ?? {},
    expiresAt: (start.now ?? Date.now()) + SIGN_IN_TTL_MS,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: tx.redirectUri,
    scope: issuer.settings.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(tx.verifier),
    code_challenge_method: 'S256',
    state: tx.state,
    nonce: tx.nonce,
  });
  return { url: url.href, tx, sealed: box.seal(JSON.stringify(tx)) };
}

const bad = (code: string, detail: string, cause?: unknown) => new HttpError(400, code, detail, { cause });

/**
 * Finishes a sign-in at its callback: the transaction cookie named by the
 * callback's `state` must open, be unexpired, be for this purpose and
 * redirect URI; then the code is exchanged (PKCE verifier), and the ID
 * token's signature, issuer, audience, expiry and nonce are verified by
 * openid-client. UserInfo fills the claims the ID token leaves out. Every
 * refusal is a 400 with its own code: sso-transaction, sso-state,
 * sso-denied, sso-code, sso-id-token.
 */
export async function completeSignIn(
  issuer: OidcIssuer,
  box: SecretBox,
  callback: {
    url: URL;
    cookie: (name: string) => string | undefined;
    /** The purposes this callback serves (the daemon's takes login and cli). */
    purposes: readonly SignInPurpose[];
    redirectUri: string;
    now?: number;
  },
): Promise<{ identity: Identity; tx: SignInTransaction }> {
  const params = callback.url.searchParams;
  const state = params.get('state') ?? '';
  if (!state) throw bad('sso-state', 'the callback has no state parameter');
  const sealed = callback.cookie(transactionCookieName(state));
  const opened = sealed ? box.open(sealed) : undefined;
  if (!opened)
    throw bad(
      'sso-transaction',
      'no sign-in under way for this state in this browser (it expired, was used, or the state is wrong): start again',
    );
  const tx = JSON.parse(opened) as SignInTransaction;
  if (tx.state !== state) throw bad('sso-state', 'the state does not match the sign-in under way');
  if (tx.expiresAt < (callback.now ?? Date.now())) throw bad('sso-transaction', 'the sign-in took longer than 10 minutes: start again');
  if (!callback.purposes.includes(tx.purpose) || tx.redirectUri !== callback.redirectUri)
    throw bad('sso-transaction', 'the sign-in under way was started for another callback');
  if (params.has('error')) {
    const why = (params.get('error_description') ?? params.get('error') ?? '').slice(0, 200);
    throw new HttpError(403, 'sso-denied', `the provider refused the sign-in: ${why}`);
  }
  const config = await issuer.configuration();
  // The exchange sends exactly the redirect URI of the request, whatever Host the callback came through.
  const current = new URL(tx.redirectUri);
  current.search = callback.url.search;
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: tx.verifier,
      expectedState: tx.state,
      expectedNonce: tx.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    throw refusalOf(err);
  }
  return { identity: await identityFrom(issuer, config, tokens), tx };
}

/** The Identity of a token response (code or device grant): ID token claims, then UserInfo for what they lack. */
export async function identityFrom(
  issuer: OidcIssuer,
  config: client.Configuration,
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
): Promise<Identity> {
  const claims = tokens.claims();
  if (!claims) throw bad('sso-id-token', 'the provider sent no ID token');
  let merged: Record<string, unknown> = { ...claims };
  if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
    try {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      merged = { ...info, ...claims };
    } catch (err) {
      throw bad('sso-id-token', `the provider's UserInfo failed: ${(err as Error).message}`, err);
    }
  }
  return identityOf(issuer.settings, merged);
}

/** openid-client's errors as the 400 a user can act on: the code could not be exchanged, or the ID token is wrong. */
export function refusalOf(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { name?: string; code?: string; error?: string; message?: string };
  // The provider did not answer: nothing the user sent was wrong.
  if (e.name === 'TypeError' || e.name === 'AbortError' || e.name === 'TimeoutError')
    return new HttpError(503, 'sso-unavailable', `the OpenID provider cannot be reached: ${e.message ?? e.name}`, {
      headers: { 'Retry-After': '15' },
    });
  if (e.name === 'ResponseBodyError' || e.error)
    return bad('sso-code', `the provider refused the code: ${e.error ?? ''} ${e.message ?? ''}`.trim(), err);
  if (e.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || e.name === 'OperationProcessingError' || e.code?.startsWith('OAUTH_'))
    return bad('sso-id-token', `the provider's answer failed verification: ${e.message ?? e.code}${causeOf(err)}`, err);
  return bad('sso-code', `the sign-in could not be completed: ${e.message ?? String(err)}`, err);
}

/** What openid-client's error names beneath its message: the claim that failed (nonce, exp), or the signature. */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { claim?: unknown; message?: unknown } }).cause;
  if (typeof cause?.claim === 'string') return ` (the ${cause.claim} claim)`;
  return typeof cause?.message === 'string' ? ` (${cause.message.slice(0, 200)})` : '';
}
