import { STATUS_CODES } from 'node:http';

/**
 * Generic causes by the kind of failure, most specific first: a probe's
 * message names addresses, ports, host names and library internals
 * (`connect ECONNREFUSED 10.1.2.3:5432`), which a public page must not.
 */
const KINDS: Array<[RegExp, string]> = [
  [/\btime(?:d ?)?out\b|ETIMEDOUT|UND_ERR_\w*TIMEOUT/i, 'timeout'],
  [/ECONNREFUSED/, 'connection refused'],
  [/ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME|getaddrinfo|\bDNS\b/i, 'DNS lookup failed'],
  [/\bTLS\b|\bSSL\b|certificate|CERT_|ERR_TLS|self[- ]signed|UNABLE_TO_VERIFY|EPROTO/i, 'TLS error'],
  [/ECONNRESET|EPIPE|socket hang up|other side closed|ECONNABORTED/i, 'connection reset'],
  [/EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN|EADDRNOTAVAIL/, 'host unreachable'],
  [/redirect loop/i, 'redirect loop'],
];

/** Causes by error code, for codes that say it all. */
const BY_CODE: Record<string, string> = {
  DOCKER_ERROR: 'image pull failed',
  // The message quotes the value seen (a body field, a header), which may be private.
  CONDITION_FAILED: 'a check condition failed',
  // An upside-down check fails when the target answers as if it were up.
  UPSIDE_DOWN: 'the target is up (upside-down check)',
  LOCATION_UNAVAILABLE: 'probe location unavailable',
  AGENT_DISCONNECTED: 'agent disconnected',
  ACME_ORDER_FAILED: 'certificate order failed',
  // Push checks: the message of a failed run quotes its exit code and the job's own output.
  MISSED_PING: 'missed its scheduled run',
  FAILED_RUN: 'the run failed',
  // The protocol checks (docs/API.md#check-types): the message may name records, banners or services.
  DNS_ERROR: 'DNS answer not as expected',
  PING_FAILED: 'no ping reply',
  TLS_ERROR: 'TLS error',
  NO_RESPONSE: 'no response',
  EXPECT_FAILED: 'unexpected response',
  GRPC_ERROR: 'gRPC service not serving',
  WEBSOCKET_ERROR: 'WebSocket handshake failed',
  SSH_ERROR: 'not an SSH server',
};

/**
 * A probe failure as anyone may read it: `HTTP 503 Service Unavailable` for
 * an HTTP status, else the kind of failure (`connection refused`, `timeout`,
 * `DNS lookup failed`, `TLS error`, …) from the error code and message, never
 * the message itself. Null when there is neither.
 */
export function publicCause(errorCode: string | null, message: string | null): string | null {
  if (errorCode && /^\d{3}$/.test(errorCode)) {
    const reason = STATUS_CODES[Number(errorCode)];
    return reason ? `HTTP ${errorCode} ${reason}` : `HTTP ${errorCode}`;
  }
  if (errorCode && Object.hasOwn(BY_CODE, errorCode)) return BY_CODE[errorCode];
  if (!errorCode && !message) return null;
  const text = message ?? '';
  for (const [pattern, cause] of KINDS) if (pattern.test(text)) return cause;
  return errorCode === 'CONNECTION_ERROR' ? 'connection failed' : 'check failed';
}
