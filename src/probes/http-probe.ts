import { VERSION } from '../version.ts';
import { type CheckConditions, judge } from './check-conditions.ts';
import type { Dispatchers } from './dispatchers.ts';
import { CONDITION_FAILED, describeError } from './errors.ts';
import { BodyDecodeError, readBody } from './read-body.ts';
import { requestUrl } from './request.ts';
import type { ProbeResult } from './types.ts';

/** Bytes of a response body read and thrown away before the connection is dropped instead. */
const DUMP_LIMIT = 64 * 1024;

export interface HttpCheckOptions {
  /** The resource's conditions; null for the seed's check. */
  conditions: CheckConditions | null;
  /** Most body bytes read (after decoding) for `[BODY]` (`--max-body-bytes`). */
  maxBodyBytes: number;
}

/**
 * `GET target`: 2xx is AVAILABLE, any other status NOT_AVAILABLE with the code
 * as `errorCode`; no response at all is `CONNECTION_ERROR`. Without conditions
 * the body is discarded as it streams (never buffered). With conditions, the
 * answer must also meet them (`CONDITION_FAILED` otherwise; conditions that read
 * `[STATUS]` replace the 2xx rule), and the body is read, up to the cap, only
 * when one of them reads it.
 */
export async function probeHttp(
  target: string,
  skipTLS: boolean,
  dispatchers: Dispatchers,
  timeoutMs: number,
  opts: HttpCheckOptions = { conditions: null, maxBodyBytes: 0 },
): Promise<Omit<ProbeResult, 'durationMs' | 'checkedAt'>> {
  // A cleared timer, not AbortSignal.timeout(): that one keeps every check's signal alive for the full timeout.
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const { conditions } = opts;
  const started = performance.now();
  try {
    const res = await requestUrl(dispatchers.http(skipTLS), target, {
      method: 'GET',
      headers: { 'user-agent': `monctl/${VERSION}`, accept: '*/*' },
      signal,
    });
    // Gatus's [RESPONSE_TIME]: until the answer's head, not its body.
    const responseTimeMs = performance.now() - started;
    const statusLine = `${res.statusCode}${res.statusText ? ` ${res.statusText}` : ''}`;
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    // The seed's verdict stands unless the conditions say which statuses are up.
    const judged = conditions !== null && (ok || conditions.readsStatus);
    const body = judged && conditions.needsBody ? await readBody(res.body, res.headers['content-encoding'], opts.maxBodyBytes) : null;
    // Drain so the connection goes back to the pool; a large or slow body just closes it.
    if (!body) await res.body.dump({ limit: DUMP_LIMIT, signal }).catch(() => undefined);
    // HTTPS: the certificate of the connection the answer came on (for CERT_EXPIRING alerts).
    const notAfter = /^https:/i.test(target) ? dispatchers.certExpiry(target) : undefined;
    const cert = notAfter === undefined ? {} : { certNotAfter: notAfter };
    if (!judged) {
      if (ok) return { status: 'AVAILABLE', message: statusLine, errorCode: null, ...cert };
      return { status: 'NOT_AVAILABLE', message: statusLine, errorCode: String(res.statusCode), ...cert };
    }
    const passed = { status: 'AVAILABLE' as const, message: statusLine, errorCode: null, ...cert };
    return judge(
      conditions,
      {
        status: res.statusCode,
        responseTimeMs,
        body: body?.text ?? null,
        bodyTruncated: body?.truncated ?? false,
        headers: res.headers,
        certificateExpiresInMs: notAfter === undefined ? null : notAfter - Date.now(),
        ip: dispatchers.remoteAddress(target) ?? null,
        connected: true,
      },
      passed,
    );
  } catch (err) {
    if (err instanceof BodyDecodeError) return { status: 'NOT_AVAILABLE', message: err.message, errorCode: CONDITION_FAILED };
    const cause = signal.aborted ? `timeout after ${timeoutMs} ms` : describeError(err, timeoutMs);
    return { status: 'NOT_AVAILABLE', message: cause, errorCode: 'CONNECTION_ERROR' };
  } finally {
    clearTimeout(timer);
  }
}
