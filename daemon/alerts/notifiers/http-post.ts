import { Agent, type Dispatcher, request } from 'undici';
import { readBody } from '../../../src/probes/read-body.ts';
import { VERSION } from '../../../src/version.ts';
import { describeError } from '../../probes/errors.ts';
import type { SendOutcome } from '../types.ts';

/**
 * One POST to a receiver, for the HTTP notifiers (WEBHOOK, SLACK, NTFY): a
 * hard deadline over the whole exchange, no redirects followed, the answer's
 * first bytes read (decoded, by the probes' capped reader) for a short excerpt
 * of a refusal; a longer body is dropped with its connection. Never throws:
 * every failure is a SendOutcome.
 */
const EXCERPT = 200;

/** The pool of the HTTP notifiers: one per daemon, connections kept alive per origin. */
export function createNotifierDispatcher(timeoutMs: number): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: timeoutMs },
  });
}

/** What a channel adds to one request (postJson's `extra`). */
export interface PostExtra {
  /** POST unless said (MATRIX sends with PUT, and looks a room alias up with GET, whose body is not sent). */
  method?: 'POST' | 'PUT' | 'GET';
  /**
   * Reads a provider's own answer (its first 800 characters, decoded) into the outcome: Telegram's
   * `{ok: false, parameters: {retry_after}}`, an error description worth more than the excerpt.
   */
  inspect?: (status: number, text: string, outcome: SendOutcome) => SendOutcome;
}

/**
 * The wait a 429 or 503 asks for in `Retry-After` (seconds, or an HTTP date), in ms; undefined
 * when absent or unreadable. Capped later by the dispatcher (backoff.ts nextDelay).
 */
export function retryAfterOf(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\s*\d{1,10}\s*$/.test(text)) return Number(text) * 1000;
  // Only an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`): Date.parse reads "-5" as a year.
  const at = /^\s*[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT\s*$/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface PostOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** The caller's signal (the dispatcher stopping, say). */
  signal: AbortSignal;
}

/**
 * Whether a failed answer is worth retrying: 4xx other than 408 and 429 are
 * the receiver refusing this request (and it will refuse it again); 3xx are
 * a wrong URL (redirects are not followed, so a retry gets the same).
 */
export function retryableStatus(status: number): boolean {
  if (status === 408 || status === 429) return true;
  return status >= 500;
}

export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
  extra: PostExtra = {},
): Promise<SendOutcome> {
  const started = performance.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, deadline.signal]);
  const outcome = (o: Omit<SendOutcome, 'latencyMs'>): SendOutcome => ({ ...o, latencyMs: Math.round(performance.now() - started) });
  try {
    const res = await request(url, {
      method: extra.method ?? 'POST',
      dispatcher: opts.dispatcher,
      signal,
      body: extra.method === 'GET' ? undefined : body,
      headers: { 'content-type': 'application/json', 'user-agent': `monctl/${VERSION}`, ...headers },
    });
    const { excerpt, raw } = await readExcerpt(res);
    const status = res.statusCode;
    const inspect = (o: SendOutcome) => (extra.inspect ? extra.inspect(status, raw, o) : o);
    if (status >= 200 && status < 300) return inspect(outcome({ ok: true, statusCode: status, error: null, retryable: false }));
    const retryAfterMs = status === 429 || status === 503 ? retryAfterOf(res.headers['retry-after']) : undefined;
    const location =
      status >= 300 && status < 400 && typeof res.headers.location === 'string'
        ? ` (redirect to ${res.headers.location}: not followed)`
        : '';
    return inspect(
      outcome({
        ok: false,
        statusCode: status,
        retryable: retryableStatus(status),
        error: `HTTP ${status}${location}${excerpt ? `: ${excerpt}` : ''}`,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      }),
    );
  } catch (err) {
    const error = deadline.signal.aborted
      ? `timeout after ${opts.timeoutMs} ms`
      : opts.signal.aborted
        ? 'aborted'
        : describeError(err, opts.timeoutMs);
    return outcome({ ok: false, statusCode: null, error, retryable: true });
  } finally {
    clearTimeout(timer);
  }
}

/** The first EXCERPT characters of the answer, on one line (empty when it cannot be read), and its first 4 × EXCERPT as read. */
async function readExcerpt(res: Dispatcher.ResponseData): Promise<{ excerpt: string; raw: string }> {
  let raw = '';
  try {
    raw = (await readBody(res.body, res.headers['content-encoding'], EXCERPT * 4)).text;
  } catch {
    // A body cut short or undecodable still leaves the status to report.
  }
  const text = raw.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return { excerpt: text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text, raw };
}
