import type { IncomingMessage } from 'node:http';
import { invalidField } from '../../../src/errors.ts';

/** The daemon's callback of single sign-on, to register at the provider as `<origin>/login/sso/callback`. */
export const CALLBACK_PATH = '/login/sso/callback';

const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/;

/** A lower-cased Host header fit for a redirect URI: a plain host name or address, with an optional port. */
export const isHostAuthority = (host: string) => host.length <= 300 && HOST.test(host);

/**
 * The redirect URI of the daemon's sign-ins. With `--public-url` it is that
 * URL's (the one registered at the provider, whatever proxy is in between);
 * without it, the origin the browser used: the scheme of the API listener
 * (https with --tls-cert) and the request's Host (`:authority` on HTTP/2),
 * which must be a plain host name or address with an optional port. A forged
 * Host gains nothing: the provider accepts only the registered redirect URIs,
 * and the transaction cookie binds the callback to the URI the sign-in began with.
 */
export function callbackUrl(req: IncomingMessage, config: { publicUrl?: string; tls?: unknown }): string {
  if (config.publicUrl) return `${config.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  const raw = req.headers[':authority'] ?? req.headers.host;
  const host = (Array.isArray(raw) ? raw[0] : raw)?.toLowerCase() ?? '';
  if (!isHostAuthority(host)) throw invalidField('Host', 'must be a host name or address, with an optional port');
  return `${config.tls ? 'https' : 'http'}://${host}${CALLBACK_PATH}`;
}
