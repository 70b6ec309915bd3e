import { describe, expect, it } from 'vitest';
import { publicCause } from '../../src/probes/public-cause.ts';

/** What anonymous status-page visitors read instead of a probe's message (issue 25). */
describe('publicCause', () => {
  it('names an HTTP status by its code and reason', () => {
    expect(publicCause('503', '503 Service Unavailable')).toBe('HTTP 503 Service Unavailable');
    expect(publicCause('599', '599')).toBe('HTTP 599');
  });

  it('gives the kind of a connection failure, never its addresses', () => {
    const cases: Array<[string, string]> = [
      ['ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:5432', 'connection refused'],
      ['connect ECONNREFUSED 10.1.2.3:5432', 'connection refused'],
      ['timeout after 5000 ms', 'timeout'],
      ['ENOTFOUND: getaddrinfo ENOTFOUND db.internal.example', 'DNS lookup failed'],
      ['EAI_AGAIN: getaddrinfo EAI_AGAIN db.internal', 'DNS lookup failed'],
      ['TLS error: wrong version number', 'TLS error'],
      ['CERT_HAS_EXPIRED: certificate has expired', 'TLS error'],
      ['DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate', 'TLS error'],
      ['ECONNRESET: read ECONNRESET', 'connection reset'],
      ['socket hang up', 'connection reset'],
      ['EHOSTUNREACH: connect EHOSTUNREACH 10.9.9.9:443', 'host unreachable'],
      ['redirect loop detected', 'redirect loop'],
      ['invalid TCP target "x"', 'connection failed'],
    ];
    for (const [message, cause] of cases) expect(publicCause('CONNECTION_ERROR', message), message).toBe(cause);
  });

  it('names other codes by what failed, and says nothing without a cause', () => {
    expect(publicCause('DOCKER_ERROR', 'registry.internal:5000 said 401')).toBe('image pull failed');
    expect(publicCause('LOCATION_UNAVAILABLE', 'agent eu-1 is offline')).toBe('probe location unavailable');
    expect(publicCause('AGENT_DISCONNECTED', 'agent disconnected')).toBe('agent disconnected');
    // A push check's failed run: its message quotes the job's output, which may say anything (a timeout, a host).
    expect(publicCause('FAILED_RUN', 'exit code 3: pg_dump: connection to 10.0.0.5 timed out')).toBe('the run failed');
    expect(publicCause('MISSED_PING', 'no ping since 2026-11-28T03:00:00')).toBe('missed its scheduled run');
    expect(publicCause(null, 'internal error: boom at 10.0.0.1')).toBe('check failed');
    expect(publicCause(null, null)).toBeNull();
  });
});
