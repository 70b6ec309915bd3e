import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { HttpError } from '../../src/errors.ts';
import type { DaemonConfig } from '../config.ts';

/** Whether the request came over the TLS edge (HTTP/1.1 or HTTP/2). */
export const overTls = (req: IncomingMessage) => (req.socket as TLSSocket | undefined)?.encrypted === true;

/**
 * The 308 that sends a plain-HTTP request to the HTTPS edge (a route's or a
 * status page's `httpsRedirect`), or undefined when the request is already
 * over TLS or there is no HTTPS edge to send it to. `host` is a bare host name.
 */
export function httpsRedirect(
  config: Pick<DaemonConfig, 'edgeTlsListen'>,
  req: IncomingMessage,
  host: string,
  pathAndQuery: string,
): HttpError | undefined {
  const tls = config.edgeTlsListen;
  if (!tls || overTls(req)) return undefined;
  const port = tls.port === 443 ? '' : `:${tls.port}`;
  return new HttpError(308, 'https-redirect', 'access: redirected to HTTPS', {
    headers: { Location: `https://${host}${port}${pathAndQuery}` },
  });
}
