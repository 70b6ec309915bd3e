/**
 * Whether a failed connection failed in TLS (the handshake, or a certificate not trusted for the
 * name): TLS_ERROR rather than CONNECTION_ERROR for the types that speak TLS over their own
 * client (GRPC, WEBSOCKET; docs/API.md#check-types).
 */
import { certificateFailure } from '../tls/certificate-error.ts';
import { describeError } from './errors.ts';

/** OpenSSL's and Node's words for a handshake or certificate failure, in a message that only has text (grpc-js's status details). */
const TLS_WORDS = /certificate|altnames|SSL routines|wrong version number|handshake|TLS|ERR_SSL_/i;

/** The TLS cause of `err` (an error, or the text a client made of one), or undefined when the failure was not TLS's. */
export function tlsFailure(err: unknown): string | undefined {
  if (typeof err === 'string')
    return TLS_WORDS.test(err) ? err.replace(/^No connection established\. Last error: (Error: )?/, '') : undefined;
  const failure = certificateFailure(err);
  if (failure) return describeError(failure);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^ERR_(SSL|TLS)_/.test(code)) return describeError(err);
  return undefined;
}
