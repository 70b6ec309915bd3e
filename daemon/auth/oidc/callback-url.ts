import type { IncomingMessage } from 'node:http';
import { invalidField } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { overTls } from '../../http/https-redirect.ts';

/** The path of the daemon's SSO callback: registered at the provider as `<public URL>/login/sso/callback`. */
export const CALLBACK_PATH = '/login/sso/callback';

const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The redirect URI of the daemon's sign-ins: under `--public-url` when set
 * (behind a proxy), else the origin this request came to. The provider
 * accepts only registered redirect URIs, and the callback compares it with
 * the one sealed in the transaction, so a forged Host leads nowhere.
 */
export function callbackUrl(ctx: DaemonContext, req: IncomingMessage): string {
  const base = ctx.config.publicUrl?.replace(/\/+$/, '');
  if (base) return `${base}${CALLBACK_PATH}`;
  const host = req.headers.host ?? '';
  if (!HOST.test(host)) throw invalidField('Host', 'the Host header is not a host name');
  return `${overTls(req) ? 'https' : 'http'}://${host.toLowerCase()}${CALLBACK_PATH}`;
}
