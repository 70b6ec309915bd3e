import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import { signInAtProvider } from '../helpers/oidc-provider.ts';
import { edge, type EdgeResponse, startTarget } from '../tunnel/helpers.ts';

/** The daemon's flags for single sign-on against the test provider (groups asked for). */
export const ssoArgs = (issuer: string) => [
  '--oidc-issuer',
  issuer,
  '--oidc-client-id',
  'monctl',
  '--oidc-scopes',
  'openid,email,profile,groups',
];
export const ssoEnv = (secret: string) => ({ MONCTL_OIDC_CLIENT_SECRET: secret });

/** A target that answers with the headers it got, as JSON (what the edge told it). */
export async function echoTarget() {
  let hits = 0;
  const target = await startTarget((req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  return Object.assign(target, { hits: () => hits });
}

/** The name=value of a Set-Cookie line, and its attributes lower-cased. */
export function parseSetCookie(line: string): { name: string; value: string; attributes: string[] } {
  const [pair, ...attributes] = line.split(';').map((p) => p.trim());
  const eq = pair!.indexOf('=');
  return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attributes: attributes.map((a) => a.toLowerCase()) };
}

export const setCookies = (headers: IncomingHttpHeaders) => (headers['set-cookie'] ?? []).map(parseSetCookie);
export const HTML = { accept: 'text/html,application/xhtml+xml' };

export interface SignedIn {
  /** `name=value` of the session cookie, for a Cookie header. */
  cookie: string;
  redirect: EdgeResponse;
  callback: EdgeResponse;
  /** The callback's path and query, and the sign-in cookie it was sent with (to replay them). */
  callbackPath: string;
  txCookie: string;
}

/**
 * Visits `path` on `host` (a Host header with the edge's port) as a browser without a session, goes
 * through the provider as `login`, and brings the callback back to the edge: the session cookie.
 */
export async function signIn(edgeUrl: string, host: string, path: string, login: string): Promise<SignedIn> {
  const redirect = await edge(edgeUrl, host, 'GET', path, undefined, HTML);
  expect(redirect.status, redirect.text).toBe(302);
  const tx = setCookies(redirect.headers)[0]!;
  const back = new URL(await signInAtProvider(String(redirect.headers.location), login));
  const txCookie = `${tx.name}=${tx.value}`;
  const callbackPath = back.pathname + back.search;
  const callback = await edge(edgeUrl, host, 'GET', callbackPath, undefined, { cookie: txCookie });
  const session = setCookies(callback.headers).find((c) => c.name.endsWith('monctl_route_sso'));
  return { cookie: session ? `${session.name}=${session.value}` : '', redirect, callback, callbackPath, txCookie };
}
