/** A check whose answer came but broke one of the resource's conditions (docs/DECISIONS.md#probe-conditions). */
export const CONDITION_FAILED = 'CONDITION_FAILED';
/** An upside-down resource whose check passed: the target answered as if it were up (docs/DECISIONS.md#probe-requests). */
export const UPSIDE_DOWN = 'UPSIDE_DOWN';
/** A push check's job reported a failure: `/fail`, or a non-zero exit code (docs/API.md#push-checks). */
export const FAILED_RUN = 'FAILED_RUN';

/**
 * The protocol checks' own codes (docs/API.md#check-types). A target that cannot be reached at all
 * (refused, unreachable, no answer to a connect, a name that does not resolve) stays
 * `CONNECTION_ERROR`, whatever the type.
 */
/** DNS: the resolver answered with an rcode other than NOERROR, or with no record of the type (the message names which). */
export const DNS_ERROR = 'DNS_ERROR';
/** PING: no echo came back (100 % loss). */
export const PING_FAILED = 'PING_FAILED';
/** TLS, GRPC over TLS, wss: the handshake failed or the certificate is not trusted for the name; STARTTLS refused. */
export const TLS_ERROR = 'TLS_ERROR';
/** UDP: no datagram came back within the timeout (UDP is connectionless: silence is the only failure it can see). */
export const NO_RESPONSE = 'NO_RESPONSE';
/** TCP: the first bytes did not match `expect` (or the peer closed before they came). */
export const EXPECT_FAILED = 'EXPECT_FAILED';
/** GRPC: the health service answered other than SERVING (the message is the status), or the call failed with a gRPC status. */
export const GRPC_ERROR = 'GRPC_ERROR';
/** WEBSOCKET: the server refused the upgrade (the message names the HTTP status) or broke the protocol. */
export const WEBSOCKET_ERROR = 'WEBSOCKET_ERROR';
/** SSH: the server sent no SSH identification string (`SSH-2.0-…`). */
export const SSH_ERROR = 'SSH_ERROR';

/** Turns a network error into a one-line cause for `message` (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`). */
export function describeError(err: unknown, timeoutMs?: number): string {
  if (err === undefined || err === null) return 'unknown error';
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT' ||
    e.code === 'ETIMEDOUT'
  ) {
    return timeoutMs !== undefined ? `timeout after ${timeoutMs} ms` : `timeout: ${e.message ?? ''}`.trim();
  }
  // undici wraps the socket error; the inner one names the real cause.
  if ((e.code === 'UND_ERR_SOCKET' || e.name === 'TypeError') && e.cause) return describeError(e.cause, timeoutMs);
  if (e.name === 'AggregateError' && Array.isArray((err as AggregateError).errors)) {
    return describeError((err as AggregateError).errors[0], timeoutMs);
  }
  if (e.code === 'UND_ERR_INVALID_ARG' && /redirect loop/i.test(e.message ?? '')) return 'redirect loop detected';
  let message = (e.message ?? String(err)).replace(/\s+/g, ' ').trim();
  // OpenSSL's errors carry library internals; keep the reason (`wrong version number`).
  const ssl = /error:[0-9A-Fa-f]+:SSL routines:[^:]*:([^:]+)/.exec(message);
  if (ssl) message = `TLS error: ${ssl[1]}`;
  if (e.code && !message.includes(e.code)) return `${e.code}: ${message}`;
  return message || e.code || 'unknown error';
}
