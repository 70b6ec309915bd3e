import { type CheckConditions, judge } from './check-conditions.ts';
import { recordTiming } from './connection-timing.ts';
import type { Dispatchers } from './dispatchers.ts';
import { MAX_REDIRECTS } from './dispatchers.ts';
import { CONDITION_FAILED, describeError } from './errors.ts';
import { BodyDecodeError, type ReadBody, readBody } from './read-body.ts';
import { checkRequest, requestUrl } from './request.ts';
import { REDIRECTS, requestKeepingSecrets } from './redirects.ts';
import type { CheckReport, HttpRequestSpec, ProbeResult } from './types.ts';

/** Bytes of a response body read and thrown away before the connection is dropped instead. */
const DUMP_LIMIT = 64 * 1024;
/** Bytes of the decoded body a report shows. */
export const REPORT_BODY_BYTES = 4096;

export interface HttpCheckOptions {
  /** The resource's conditions; null for the seed's check. */
  conditions: CheckConditions | null;
  /** Most body bytes read (after decoding) for `[BODY]` (`--max-body-bytes`). */
  maxBodyBytes: number;
  /** The request and expected answer; absent: the seed's GET, 2xx up. */
  http?: HttpRequestSpec;
  /** Also return the condition outcomes and the response (`POST /admin/api/resources/test`). */
  report?: boolean;
}

type Outcome = Omit<ProbeResult, 'durationMs' | 'checkedAt'>;

/**
 * One HTTP check: the seed's `GET target` unless `http` says otherwise. The status decides first
 * (`expectStatus`, else 2xx, with the code as `errorCode`), except that without `expectStatus`
 * conditions that read `[STATUS]` decide alone, as in Gatus; then the conditions (`CONDITION_FAILED`).
 * No response at all is `CONNECTION_ERROR`. The body is read only when a condition reads it or a
 * report is asked for, decoded and capped; otherwise it is discarded as it streams.
 */
export async function probeHttp(
  target: string,
  skipTLS: boolean,
  dispatchers: Dispatchers,
  timeoutMs: number,
  opts: HttpCheckOptions = { conditions: null, maxBodyBytes: 0 },
): Promise<Outcome> {
  // A cleared timer, not AbortSignal.timeout(): that one keeps every check's signal alive for the full timeout.
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const { conditions, http } = opts;
  const timing = recordTiming(signal);
  const report: CheckReport | undefined = opts.report ? { conditions: [], response: null } : undefined;
  try {
    const dispatcher = dispatchers.http(skipTLS, http?.clientCert);
    const request = {
      ...checkRequest(http),
      signal,
      // The pools wait up to the longest timeout a resource may ask for; this check waits its own.
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    const res =
      http?.followRedirects && http.secretHeaders?.length
        ? await requestKeepingSecrets(dispatcher, target, request, http.secretHeaders)
        : await requestUrl(dispatcher, target, request);
    // Gatus's [RESPONSE_TIME]: until the answer's head, not its body.
    const responseTimeMs = performance.now() - timing.started;
    const code = res.statusCode;
    const statusLine = `${code}${res.statusText ? ` ${res.statusText}` : ''}`;
    const expect = http?.expectStatus ?? null;
    const statusOk = expect ? expect.some(([from, to]) => code >= from && code <= to) : code >= 200 && code < 300;
    const statusDecides = expect !== null || !conditions?.readsStatus;
    // Still a redirect after the last hop followed: the chain is too long, whatever the statuses expected.
    const endless = (http?.followRedirects ?? true) && REDIRECTS.has(code) && res.headers.location !== undefined;
    const judged = conditions !== null && !endless && (statusOk || !statusDecides);
    const cap = Math.max(conditions?.needsBody && (judged || report) ? opts.maxBodyBytes : 0, report ? REPORT_BODY_BYTES : 0);
    let body: ReadBody | null = null;
    let bodyError: BodyDecodeError | null = null;
    if (cap > 0) {
      try {
        body = await readBody(res.body, res.headers['content-encoding'], cap);
      } catch (err) {
        if (!(err instanceof BodyDecodeError)) throw err;
        bodyError = err;
      }
    }
    // Drain so the connection goes back to the pool; a large or slow body just closes it.
    else await res.body.dump({ limit: DUMP_LIMIT, signal }).catch(() => undefined);
    // HTTPS: the certificate of the connection the answer came on (for CERT_EXPIRING alerts).
    const notAfter = /^https:/i.test(target) ? dispatchers.certExpiry(target) : undefined;
    const cert = notAfter === undefined ? {} : { certNotAfter: notAfter };
    if (report) {
      const text = body ? Buffer.from(body.text, 'utf8') : Buffer.alloc(0);
      report.response = {
        status: code,
        statusText: res.statusText ?? '',
        headers: res.headers as Record<string, string | string[]>,
        body: bodyError ? `(${bodyError.message})` : text.subarray(0, REPORT_BODY_BYTES).toString('utf8'),
        bodyTruncated: (body?.truncated ?? false) || text.length > REPORT_BODY_BYTES,
      };
    }
    const observation = {
      status: code,
      responseTimeMs,
      body: body?.text ?? null,
      bodyTruncated: body?.truncated ?? false,
      headers: res.headers,
      certificateExpiresInMs: notAfter === undefined ? null : notAfter - Date.now(),
      ip: timing.remoteAddress ?? dispatchers.remoteAddress(target) ?? null,
      connected: true,
    };
    let outcome: Outcome;
    if (endless)
      outcome = { status: 'NOT_AVAILABLE', message: `more than ${MAX_REDIRECTS} redirects (${statusLine})`, errorCode: String(code) };
    else if (statusDecides && !statusOk) outcome = { status: 'NOT_AVAILABLE', message: statusLine, errorCode: String(code) };
    else if (judged && bodyError && conditions.needsBody)
      outcome = { status: 'NOT_AVAILABLE', message: bodyError.message, errorCode: CONDITION_FAILED };
    else outcome = { status: 'AVAILABLE', message: statusLine, errorCode: null };
    outcome = { ...outcome, ...cert };
    // A report shows every condition's outcome even when the status already failed the check.
    if (conditions && (judged || report) && !bodyError) {
      const judgedOutcome = judge(conditions, observation, outcome, report?.conditions);
      if (judged) outcome = judgedOutcome;
    }
    return withExtras(outcome, timing.timing(), report);
  } catch (err) {
    const cause = signal.aborted ? `timeout after ${timeoutMs} ms` : describeError(err, timeoutMs);
    if (report && conditions)
      judge(
        conditions,
        { connected: false, status: null, responseTimeMs: performance.now() - timing.started },
        { status: 'NOT_AVAILABLE', message: cause, errorCode: null },
        report.conditions,
      );
    return withExtras({ status: 'NOT_AVAILABLE', message: cause, errorCode: 'CONNECTION_ERROR' }, timing.timing(), report);
  } finally {
    clearTimeout(timer);
  }
}

function withExtras(outcome: Outcome, timing: Outcome['timing'], report: CheckReport | undefined): Outcome {
  return report ? { ...outcome, timing, report } : { ...outcome, timing };
}
