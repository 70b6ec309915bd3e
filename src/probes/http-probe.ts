import { VERSION } from '../version.ts';
import type { Dispatchers } from './dispatchers.ts';
import { describeError } from './errors.ts';
import { requestUrl } from './request.ts';
import type { ProbeResult } from './types.ts';

/** Bytes of a response body read and thrown away before the connection is dropped instead. */
const DUMP_LIMIT = 64 * 1024;

/**
 * `GET target`: 2xx is AVAILABLE, any other status NOT_AVAILABLE with the code
 * as `errorCode`; no response at all is `CONNECTION_ERROR`. The body is
 * discarded as it streams (never buffered).
 */
export async function probeHttp(
  target: string,
  skipTLS: boolean,
  dispatchers: Dispatchers,
  timeoutMs: number,
): Promise<Omit<ProbeResult, 'durationMs' | 'checkedAt'>> {
  // A cleared timer, not AbortSignal.timeout(): that one keeps every check's signal alive for the full timeout.
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await requestUrl(dispatchers.http(skipTLS), target, {
      method: 'GET',
      headers: { 'user-agent': `monctl/${VERSION}`, accept: '*/*' },
      signal,
    });
    const statusLine = `${res.statusCode}${res.statusText ? ` ${res.statusText}` : ''}`;
    // Drain so the connection goes back to the pool; a large or slow body just closes it.
    await res.body.dump({ limit: DUMP_LIMIT, signal }).catch(() => undefined);
    // HTTPS: the certificate of the connection the answer came on (for CERT_EXPIRING alerts).
    const notAfter = /^https:/i.test(target) ? dispatchers.certExpiry(target) : undefined;
    const cert = notAfter === undefined ? {} : { certNotAfter: notAfter };
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: 'AVAILABLE', message: statusLine, errorCode: null, ...cert };
    return { status: 'NOT_AVAILABLE', message: statusLine, errorCode: String(res.statusCode), ...cert };
  } catch (err) {
    const cause = signal.aborted ? `timeout after ${timeoutMs} ms` : describeError(err, timeoutMs);
    return { status: 'NOT_AVAILABLE', message: cause, errorCode: 'CONNECTION_ERROR' };
  } finally {
    clearTimeout(timer);
  }
}
