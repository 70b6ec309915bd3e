import type { Dispatcher } from 'undici';
import { MAX_REDIRECTS } from './dispatchers.ts';
import { type RequestOptions, requestUrl } from './request.ts';

/** The statuses undici's redirect interceptor follows, and so do we. */
export const REDIRECTS = new Set([300, 301, 302, 303, 307, 308]);
/** Bytes of a hop's body read and thrown away before its connection is dropped instead. */
const DUMP_LIMIT = 64 * 1024;
/** What no other origin gets, whatever the check says: undici and browsers drop these too. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * A check with secret headers follows its redirects here rather than in undici's interceptor, which
 * drops Authorization and Cookie on a hop to another origin but forwards every other header: a
 * secret `X-Api-Key` would reach whatever host a redirect names. Here the secret headers (and the
 * credentials above) go only to the check's own origin; the rest follows as undici would (303, and
 * 301/302 after a POST, become a GET without a body). Past MAX_REDIRECTS the last redirect is the answer.
 */
export async function requestKeepingSecrets(
  dispatcher: Dispatcher,
  url: string,
  opts: RequestOptions,
  secretHeaders: readonly string[],
): Promise<Dispatcher.ResponseData> {
  const origin = new URL(url).origin;
  const secret = new Set([...secretHeaders.map((h) => h.toLowerCase()), ...CREDENTIALS]);
  let current = new URL(url);
  let { method, headers, body } = opts;
  for (let hop = 0; ; hop++) {
    const res = await requestUrl(dispatcher, current.href, { ...opts, method, headers, body, maxRedirections: 0 });
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode) || typeof location !== 'string' || hop >= MAX_REDIRECTS) return res;
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return res; // an unreadable Location: the redirect is the answer, as undici leaves it
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return res;
    await res.body.dump({ limit: DUMP_LIMIT, signal: opts.signal }).catch(() => undefined);
    if ((res.statusCode === 303 && method !== 'HEAD') || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
      method = 'GET';
      body = null;
      headers = without(headers, new Set(['content-type', 'content-length']));
    }
    if (next.origin !== origin) headers = without(headers, secret);
    current = next;
  }
}

/** A flat header list ([name, value, …]) without the named headers. */
function without(headers: RequestOptions['headers'], names: ReadonlySet<string>): string[] {
  const flat = Array.isArray(headers) ? headers : Object.entries(headers).flat();
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) if (!names.has(flat[i].toLowerCase())) out.push(flat[i], flat[i + 1]);
  return out;
}
